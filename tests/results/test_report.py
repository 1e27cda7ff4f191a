"""harness report: builds from run directories and sweep output, numbers match the summaries,
broken inputs are named and the rest is still built; run directories of before (repeats, no seed)
are still read."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from harness.results.collect import find
from harness.results.stats import mean_ci95
from harness.results.report import build, cell
from tests.conftest import REPO
from tests.results.synthetic import make_run

POLICIES = {"default": 220.0, "reach": 200.0, "rsdql": 210.0, "cloud-first": 215.0, "latency-greedy": 240.0}


def session(tmp_path, seeds=3):
    d = tmp_path / "session"
    for seed in range(seeds):
        for i, (p, m) in enumerate(POLICIES.items()):
            make_run(d / f"{p}-s{seed}", p, seed, m + seed + 1, seconds=60, draw=10 * (seed + 1) + i)
    return d


def table(html_text: str, name: str) -> list[list[str]]:
    body = re.search(rf"<table data-table='{name}'>(.*?)</table>", html_text, re.S).group(1)
    return [re.findall(r"<t[hd]>(.*?)</t[hd]>", row) for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)]


def test_every_number_in_the_html_equals_the_run_summaries(tmp_path):
    d = session(tmp_path)
    page = build(find([d]), tmp_path / "report", baseline="default")
    text = page.read_text()
    rows = table(text, "runs")
    head, body = rows[0], rows[1:]
    assert len(body) == 15
    for row in body:
        r = dict(zip(head, row))
        assert r["run"] == f"{r['policy']} s{r['seed']}"
        s = json.loads((d / f"{r['policy']}-s{r['seed']}" / "summary.json").read_text())
        for key in ("requests", "errors", "mean_ms", "p50_ms", "p95_ms", "p99_ms", "max_ms", "rps", "moves", "recovery_s"):
            assert r[key] == cell(s[key]), (r["run"], key)
        assert r["under_250ms"] == cell(s["under_threshold"])
    # across seeds: mean, CI and improvement recomputed from the summaries
    assert "Across seeds" in text and "Across repeats" not in text
    rep = table(text, "seeds")
    base = mean_ci95([json.loads((d / f"default-s{k}" / "summary.json").read_text())["mean_ms"] for k in (0, 1, 2)])[0]
    for row in rep[1:]:
        r = dict(zip(rep[0], row))
        assert r["seeds"] == "3"
        means = [json.loads((d / f"{r['policy']}-s{k}" / "summary.json").read_text())["mean_ms"] for k in (0, 1, 2)]
        mean, half = mean_ci95(means)
        assert r["mean_ms"] == cell(round(mean, 3)) and r["ci95_ms"] == cell(round(half, 3))
        assert r["improvement_vs_default"] == cell(round((base - mean) / base, 4))
    # self-contained: images inline, nothing fetched
    assert "data:image/png;base64," in text and "src='http" not in text and '<link' not in text
    for png in ("latency_over_time.png", "rps_over_time.png", "latency_cdf.png", "sim_vs_real.png"):
        assert (tmp_path / "report" / png).stat().st_size > 5000
    sim = pd.read_csv(tmp_path / "report" / "sim_vs_real.csv")
    assert len(sim) == 30 and (sim.predicted_ms < sim.measured_ms).all()  # synthetic runs predict 10-15 % low
    assert (sim.measured_ci_ms > 0).all() and (sim.measured_ci_ms < sim.measured_ms).all()  # batch means, per interval
    err, n = sim.error_pct.abs(), sim.requests
    overall = re.search(r"Overall: mean absolute error ([\d.]+) %.*?\(([\d.]+) % and", text).groups()
    assert overall == (f"{err.mean():.1f}", f"{(err * n).sum() / n.sum():.1f}")  # plain, and per request
    assert "Before calibration" not in text and "uncalibrated_ms" not in sim  # REACH's own model: nothing to compare
    assert "closed form" not in text and "closed_ms" not in sim  # one user: nothing to queue


def test_runs_with_several_users_show_the_closed_forms_error(tmp_path):
    d = tmp_path / "session"
    make_run(d / "reach-s0", "reach", 0, 300.0, seconds=60, draw=4, closed=1.02)
    page = build(find([d]), tmp_path / "report", baseline="reach")
    sim = pd.read_csv(tmp_path / "report" / "sim_vs_real.csv")
    shown = re.search(r"closed form .*?mean absolute error ([\d.]+) %, against ([\d.]+) %", page.read_text()).groups()
    assert shown == (f"{sim.closed_error_pct.abs().mean():.1f}", f"{sim.error_pct.abs().mean():.1f}")
    assert float(shown[0]) < float(shown[1])  # 2 % off against 10-15 %


def test_a_calibrated_run_shows_the_error_before_calibration_beside_it(tmp_path):
    d = tmp_path / "session"
    for r, (p, m) in enumerate(POLICIES.items()):
        make_run(d / f"{p}-s0", p, 0, m, seconds=60, draw=r, uncalibrated=0.6)
    page = build(find([d]), tmp_path / "report", baseline="default")
    sim = pd.read_csv(tmp_path / "report" / "sim_vs_real.csv")
    assert ((sim.uncalibrated_ms - sim.measured_ms) / sim.measured_ms).between(-0.45, -0.35).all()
    before, n = sim.uncalibrated_error_pct, sim.requests
    shown = re.search(r"Before calibration .*?mean absolute error ([\d.]+) %.*?\(([\d.]+) % and", page.read_text()).groups()
    assert shown == (f"{before.abs().mean():.1f}", f"{(before.abs() * n).sum() / n.sum():.1f}")


def test_missing_and_corrupt_files_are_named_and_the_rest_is_built(tmp_path):
    d = session(tmp_path, seeds=1)
    (d / "reach-s0" / "requests.csv").unlink()
    (d / "rsdql-s0" / "summary.json").write_text("{not json")
    (d / "default-s0" / "events.csv").write_text("garbage\n\x00\x01")
    col = find([d, tmp_path / "nowhere"])
    page = build(col, tmp_path / "report")
    problems = (tmp_path / "report" / "problems.txt").read_text()
    assert "reach-s0/requests.csv: missing" in problems
    assert "rsdql-s0/summary.json: corrupt" in problems
    assert "default-s0/events.csv" in problems
    assert "nowhere: no such file" in problems
    text = page.read_text()
    assert "rsdql-s0/summary.json: corrupt" in text
    assert len(table(text, "runs")) == 1 + 5  # every run still listed
    assert (tmp_path / "report" / "latency_over_time.png").exists()


def test_a_request_log_cut_mid_row_loses_that_row_and_says_so_in_one_line(tmp_path):
    """Issue 65, item 9: a requests.csv whose last row was cut mid-line (a crash mid-write) was
    read silently, the cut row a request of status 0 with the latency's first digits. Now it is
    skipped and one warning line names the file and how many rows were left out; a row with
    another number of fields than the header is skipped and counted the same way."""
    run = make_run(tmp_path / "default-s0", "default", 0, 200.0, seconds=20)
    log = run / "requests.csv"
    whole = log.read_bytes()
    n = whole.count(b"\n") - 1  # rows under the header
    last = whole.rstrip(b"\n").rfind(b"\n") + 1
    log.write_bytes(whole[:last + 22])  # the last row: its send time and part of its latency, no newline
    r = subprocess.run([sys.executable, "-m", "harness", "report", str(run)], cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    warnings = [x for x in r.stdout.splitlines() if x.startswith("warning:")]
    assert warnings == [f"warning: {log}: 1 incomplete row skipped: the last, cut mid-line (its writer stopped "
                        "mid-row)"], r.stdout
    requests = find([run]).runs[0].requests
    assert len(requests) == n - 1 and (requests.status == 200).sum() >= len(requests) - 5  # no status-0 stub
    rows = log.read_text().splitlines(keepends=True)[:-1]  # the whole rows; then a row of too few fields
    log.write_text("".join(rows[:5] + ["1.0,2.0\n"] + rows[5:]) + "1800000999.0,1")  # in the middle, and a cut end
    col = find([run])
    assert col.problems == [f"{log}: 2 incomplete rows skipped: the last, cut mid-line (its writer stopped mid-row) "
                            "and 1 with more or fewer fields than its header"]
    assert len(col.runs[0].requests) == n - 1


def test_sweep_output_gives_grouped_bars(tmp_path):
    ev = tmp_path / "eval.csv"
    pd.DataFrame([{"policy": p, "pods": n, "latency_ms": m + n, "moves": 0, "moved_share": 0, "scenarios": 10}
                  for p, m in POLICIES.items() for n in (4, 12, 20)]).to_csv(ev, index=False)
    page = build(find([ev]), tmp_path / "report")
    assert (tmp_path / "report" / "sweep_eval.png").stat().st_size > 5000
    assert "Fig. 8 sweep in simulation (harness sweep)" in page.read_text()


def test_run_directories_of_before_seeds_are_read_by_their_repeats(tmp_path):
    """Runs written when a live run had repeats (``<policy>-r<k>``, ``repeat: k`` and no seed) are
    labelled by their repeat and counted in the means across seeds as before."""
    d = tmp_path / "session"
    for r in (1, 2):
        for i, (p, m) in enumerate({"default": 220.0, "reach": 200.0}.items()):
            run = make_run(d / f"{p}-r{r}", p, 0, m + r, seconds=40, draw=10 * r + i)
            s = json.loads((run / "summary.json").read_text())
            del s["seed"]
            (run / "summary.json").write_text(json.dumps({**s, "repeat": r, "seed": None}))
    col = find([d])
    labels = ["default r1", "default r2", "reach r1", "reach r2"]
    assert col.problems == [] and sorted(r.label for r in col.runs) == labels
    build(col, tmp_path / "report")
    runs = pd.read_csv(tmp_path / "report" / "runs.csv")
    assert sorted(runs.run) == labels and runs.seed.isna().all()
    seeds = pd.read_csv(tmp_path / "report" / "seeds.csv").set_index("policy")
    assert seeds.seeds.to_dict() == {"default": 2, "reach": 2}


def test_cli_with_nothing_readable_exits_2(tmp_path):
    r = subprocess.run([sys.executable, "-m", "harness", "report", str(tmp_path / "missing")], cwd=REPO,
                       capture_output=True, text=True)
    assert r.returncode == 2 and "nothing to report" in r.stderr and r.stderr.count("\n") == 1


def test_a_leaderboard_folder_without_its_json_says_what_is_missing_and_where_its_runs_are(tmp_path):
    """Issue 65, item 9: on a leaderboard folder whose sweep did not end (no leaderboard.json),
    report said "no run directories" beside 96 of them (under runs/<track>/<app>/<scenario>/).
    Now one line says what is missing, how to finish the sweep and where the runs are."""
    lb = tmp_path / "lb"
    (lb / "runs").mkdir(parents=True)
    (lb / "leaderboard.yaml").write_text("version: 1\nname: t\ntracks: []\n")
    for setting, policies in (("short", ("default", "reach")), ("long", ("default",))):
        for i, p in enumerate(policies):
            make_run(lb / "runs" / "t" / "chain" / setting / f"{p}-s0", p, 0, 200.0 + i, seconds=20)
    r = subprocess.run([sys.executable, "-m", "harness", "report", str(lb)], cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert (f"{lb}: a leaderboard folder without leaderboard.json (its sweep did not end: stopped or killed): "
            f"harness leaderboard {lb}/leaderboard.yaml --resume --out {lb} (with its --seeds) plays what is left and "
            f"writes it; or report a setting's runs, 3 run directories in 2 folders under it, a report each: "
            f"e.g. harness report {lb}/runs/t/chain/long") in r.stderr, r.stderr
    assert "no run directories" not in r.stderr
    col = find([lb / "runs"])  # a folder of folders of runs: where they are, too
    assert col.problems == [f"{lb / 'runs'}: no run directories directly inside, and no sweep output; 3 run "
                            f"directories in 2 folders under it, a report each: e.g. harness report {lb}/runs/t/chain/long"]
    assert len(find([lb / "runs/t/chain/short"]).runs) == 2  # what the line points to is a report


def test_simulated_and_live_runs_of_one_scenario_are_set_side_by_side_with_their_ranks(tmp_path):
    """A report over both worlds: per policy each world's mean with its interval and its rank, and
    Spearman's ρ of the ranks; elsewhere in the report the simulated runs stay apart ("x (sim)")."""
    live = {"a": 200.0, "b": 220.0, "c": 260.0}
    sim = {"a": 150.0, "b": 180.0, "c": 170.0}  # the simulator swaps b and c
    for world, means in (("live", live), ("sim", sim)):
        for seed in (0, 1):
            for i, (p, m) in enumerate(means.items()):
                d = make_run(tmp_path / world / f"{p}-s{seed}", p, seed, m, seconds=40,
                             draw=10 * (seed + 1) + i + (world == "sim"))
                if world == "sim":
                    s = json.loads((d / "summary.json").read_text())
                    (d / "summary.json").write_text(json.dumps({**s, "world": "sim"}))
    col = find([tmp_path / "live", tmp_path / "sim"])
    build(col, tmp_path / "report")
    table = pd.read_csv(tmp_path / "report" / "sim_vs_live.csv").set_index("policy")
    for p in live:
        for world in ("live", "sim"):
            runs = [json.loads((tmp_path / world / f"{p}-s{seed}" / "summary.json").read_text()) for seed in (0, 1)]
            for key in ("mean_ms", "p95_ms", "p99_ms"):
                assert table.loc[p, f"{world}_{key[:-3]}"] == pytest.approx(np.mean([s[key] for s in runs]), abs=0.01)
            assert table.loc[p, f"{world}_under_threshold"] == pytest.approx(
                np.mean([s["under_threshold"] for s in runs]), abs=1e-4)
        assert table.loc[p, "p95_error"] == pytest.approx(table.loc[p, "sim_p95"] / table.loc[p, "live_p95"] - 1, abs=1e-3)
        assert 0 < table.loc[p, "ks"] <= 1 and 0 <= table.loc[p, "ks_shape"] <= 1
    assert table.live_rank.to_dict() == {"a": 1, "b": 2, "c": 3}
    assert table.sim_rank.to_dict() == {"a": 1, "b": 3, "c": 2}
    assert table.spearman_rho.iloc[0] == pytest.approx(0.5)
    assert table.kendall_tau.iloc[0] == pytest.approx(1 / 3, abs=1e-3)  # one of the three pairs swapped
    assert set(pd.read_csv(tmp_path / "report" / "seeds.csv").policy) == {"a", "b", "c", "a (sim)", "b (sim)", "c (sim)"}


def test_a_report_of_one_world_has_no_card_and_no_simulator_vs_itself(tmp_path):
    """Simulated runs only: no fidelity card, and no "Simulator vs real" (it would compare the
    simulator with itself)."""
    for seed in (0, 1):
        d = make_run(tmp_path / "sim" / f"a-s{seed}", "a", seed, 150.0, seconds=20, draw=seed)
        s = json.loads((d / "summary.json").read_text())
        (d / "summary.json").write_text(json.dumps({**s, "world": "sim"}))
    page = build(find([tmp_path / "sim"]), tmp_path / "report").read_text()
    assert "Fidelity" not in page and "Simulator vs real" not in page and "Latency over time" in page


def test_kendall_tau_and_the_ks_distance_are_the_textbook_ones():
    from harness.results.stats import kendall_tau, ks_distance

    assert kendall_tau([1, 2, 3, 4], [1, 2, 3, 4]) == 1.0 and kendall_tau([1, 2, 3], [3, 2, 1]) == -1.0
    assert kendall_tau([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(4 / 6)
    assert ks_distance([1, 2, 3], [1, 2, 3]) == 0.0 and ks_distance([1, 2], [3, 4]) == 1.0
    assert ks_distance([1, 2, 3, 4], [3, 4, 5, 6]) == pytest.approx(0.5)


def test_the_report_opens_with_a_summary_and_folds_raw_tables(tmp_path):
    """First the summary (each policy's mean and p95 with intervals, errors, ratio to the
    baseline); a long raw table is folded."""
    for seed in (0, 1):
        for p, m in (("a", 150.0), ("b", 300.0)):
            make_run(tmp_path / "runs" / f"{p}-s{seed}", p, seed, m, seconds=30, draw=seed)
    page = build(find([tmp_path / "runs"]), tmp_path / "report", baseline="a").read_text()
    first = page.index("<h2>")
    assert page[first:first + 20].startswith("<h2>Summary</h2>")
    table = pd.read_csv(tmp_path / "report" / "summary.csv").set_index("policy")
    assert table.loc["a", "ratio_to_baseline"] == 1.0 and table.loc["b", "ratio_to_baseline"] > 1.5
    assert table.loc["a", "runs"] == 2 and table.loc["a", "mean_ci95_ms"] >= 0
    assert "<details>" in page  # the per-run raw tables are folded
