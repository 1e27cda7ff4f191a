"""The leaderboard: every policy on every track it fits, the same long table whichever way the
cells are played, a reason in every empty coverage cell, and a cell whose worker dies played again
with no row lost."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import yaml

from tests.conftest import REPO

SITE = REPO / "tests/data/faultypolicy"
SHORT = {"name": "short", "description": "chain, one user, a node failure", "duration_s": 30, "app": "chain",
         "replicas": 2, "load": {"mode": "closed", "steps": [{"at_s": 0, "value": 1}]},
         "faults": [{"at_s": 10, "kind": "node-failure", "node_types": ["edge-a"]}],
         "rescheduler": {"period_s": 5, "start_s": 2, "max_moves": 4}}


def board(tmp_path, policies, apps=("chain", "aggregator-parallel")) -> str:
    sc = tmp_path / "short.yaml"
    sc.write_text(yaml.safe_dump(SHORT))
    doc = {"version": 1, "name": "test", "tracks": [
        {"name": "reschedule", "apps": list(apps), "scenarios": [str(sc), "steady"], "primary": "mean_ms",
         "policies": policies}]}
    f = tmp_path / "board.yaml"
    f.write_text(yaml.safe_dump(doc))
    return str(f)


def leaderboard(*args, env=None, timeout=600) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SITE), str(REPO)]), **(env or {})}
    return subprocess.run([sys.executable, "-m", "harness", "leaderboard", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=timeout)


def read(path) -> list[dict]:
    with open(path) as f:
        return list(csv.DictReader(f))


def test_one_process_or_two_give_the_same_long_table_and_every_empty_cell_has_a_reason(tmp_path):
    import shutil

    models = tmp_path / "models"  # REACH's model for chain only
    models.mkdir()
    for f in (REPO / "models").glob("reach-chain.*"):
        shutil.copy(f, models)
    f = board(tmp_path, ["default", "cloud-first", "reach", "kubedsm", "harness_faulty_policies:RaisesInPlan"])
    one = leaderboard(f, "--seeds", "2", "--jobs", "1", "--out", str(tmp_path / "one"), "--model-dir", str(models))
    # two: seed 0 first, then the sweep resumed to two seeds, its first cells kept as they were
    half = leaderboard(f, "--seeds", "1", "--jobs", "2", "--out", str(tmp_path / "two"), "--model-dir", str(models))
    assert half.returncode == 0, half.stderr[-3000:]
    kept = {p: p.stat().st_mtime_ns for p in (tmp_path / "two/runs").rglob("summary.json")}
    two = leaderboard(f, "--seeds", "2", "--jobs", "2", "--out", str(tmp_path / "two"), "--model-dir", str(models),
                      "--resume")
    assert one.returncode == 0, one.stderr[-3000:]
    assert two.returncode == 0, two.stderr[-3000:]
    assert kept and all(p.stat().st_mtime_ns == t for p, t in kept.items())  # not played again
    assert (tmp_path / "one/leaderboard.csv").read_text() == (tmp_path / "two/leaderboard.csv").read_text()
    parts = json.loads((tmp_path / "two/sweep-parts.json").read_text())  # the wall time is both parts'
    meta = json.loads((tmp_path / "two/leaderboard.json").read_text())
    assert len(parts) == meta["parts"] == 2 and parts[0]["cells_played"] == parts[1]["cells_played"] > 0  # seed 0, then 1
    assert meta["wall_s"] == pytest.approx(sum(p["seconds"] for p in parts), abs=0.2)
    (tmp_path / "other").mkdir()
    other = board(tmp_path / "other", ["default"])  # another file: its results do not compare
    refused = leaderboard(other, "--out", str(tmp_path / "two"), "--resume")
    assert refused.returncode == 2 and "--resume" in refused.stderr and "give a new --out" in refused.stderr
    rows = read(tmp_path / "one/leaderboard.csv")
    cells = {(r["app"], r["scenario"], r["seed"]) for r in rows}
    assert len(cells) == 2 * 2 * 2  # apps × scenarios × seeds
    assert {r["policy"] for r in rows if r["app"] == "chain"} == {"default", "cloud-first", "reach", "kubedsm",
                                                                  "raises-in-plan"}
    assert "reach" not in {r["policy"] for r in rows if r["app"] == "aggregator-parallel"}  # no model: sat out
    assert all((tmp_path / "one" / r["run_dir"] / "summary.json").exists() for r in rows)  # every number traceable
    coverage = {r["policy"]: r["reschedule"] for r in read(tmp_path / "one/coverage.csv")}
    assert coverage["reach"] == "ran on 1 of 2 apps; no model for aggregator-parallel (harness train makes one)"
    assert coverage["default"] == "ran on 2 of 2 apps"
    ranked = read(tmp_path / "one/ranked-sim.csv")
    ref = next(r for r in ranked if r["policy"] == "default")
    assert float(ref["ratio_to_reference"]) == 1.0 and ref["reference"] == "default"
    assert [int(r["rank"]) for r in ranked] == sorted(int(r["rank"]) for r in ranked)
    assert "rank  policy" in one.stdout and "coverage (policy × track)" in one.stdout
    meta = json.loads((tmp_path / "one/leaderboard.json").read_text())
    assert meta["version"] == 1 and meta["failed_cells"] == [] and meta["git_commit"]


@pytest.fixture(scope="module")
def pool_with_a_dying_worker(tmp_path_factory):
    """One sweep in a process pool in which a worker dies: what the next two tests check, each
    from its side (the pool's recovery; the same table as Ray's). Made once for both."""
    tmp_path = tmp_path_factory.mktemp("pool")
    f = board(tmp_path, ["default", "cloud-first", "harness_faulty_policies:DiesOnce"], apps=("chain",))
    marker = tmp_path / "died-pool"
    r = leaderboard(f, "--seeds", "2", "--jobs", "2", "--out", str(tmp_path / "pool"),
                    env={"HARNESS_DIES_ONCE_MARKER": str(marker)})
    return f, r, marker, tmp_path / "pool"


def test_a_cell_whose_worker_dies_is_played_again_alone_and_no_row_is_lost(pool_with_a_dying_worker):
    _, r, marker, out = pool_with_a_dying_worker
    assert r.returncode == 0, r.stderr[-3000:]
    assert marker.exists()  # a worker did die
    rows = read(out / "leaderboard.csv")
    policies = ("default", "cloud-first", "dies-once")
    per_policy = {p: {(x["scenario"], x["seed"]) for x in rows if x["policy"] == p} for p in policies}
    assert all(len(per_policy[p]) == 2 * 2 for p in policies)  # every cell, every policy
    assert json.loads((out / "leaderboard.json").read_text())["failed_cells"] == []


def test_a_bad_leaderboard_file_is_one_line_naming_the_field(tmp_path):
    f = tmp_path / "bad.yaml"
    f.write_text(yaml.safe_dump({"version": 1, "name": "x", "tracks": [{"name": "t", "apps": ["chain"],
                                                                          "scenarios": ["steady"], "primary": "speed"}]}))
    r = leaderboard(str(f), "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "tracks[0].primary" in r.stderr and str(f) in r.stderr
    f.write_text(yaml.safe_dump({"version": 1, "name": "x", "tracks": [{"name": "t", "apps": ["chain"], "scenarios": [
        "steady"], "policies": ["reach", "cloud-first"]}]}))  # the reference, default, would not play
    r = leaderboard(str(f), "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "reference" in r.stderr


def test_on_ray_the_same_long_table_and_a_dying_worker_loses_no_row(pool_with_a_dying_worker, tmp_path):
    """A local Ray instance plays the cells: the long table is the process pool's, byte for byte,
    and a cell whose worker dies is played again by Ray."""
    f, pool, _, pool_out = pool_with_a_dying_worker
    env = {"HARNESS_DIES_ONCE_MARKER": str(tmp_path / "died-ray")}
    ray = leaderboard(f, "--seeds", "2", "--jobs", "2", "--ray", "local", "--out", str(tmp_path / "ray"), env=env)
    assert pool.returncode == 0, pool.stderr[-3000:]
    assert ray.returncode == 0, ray.stderr[-3000:]
    assert (tmp_path / "died-ray").exists()  # a Ray worker did die
    assert (tmp_path / "ray/leaderboard.csv").read_text() == (pool_out / "leaderboard.csv").read_text()
    rows = read(tmp_path / "ray/leaderboard.csv")
    assert all((tmp_path / "ray" / r["run_dir"] / "summary.json").exists() for r in rows)
    assert json.loads((tmp_path / "ray/leaderboard.json").read_text())["executor"] == "ray:local"


def test_the_report_page_renders_the_leaderboard_in_a_real_browser(tmp_path):
    """`harness report DIR` on a leaderboard folder: one page with each track's ranked table and
    bars, and the coverage matrix, as headless Chromium renders it."""
    import shutil

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("no chromium (scripts/install-system-deps.sh installs it as root)")
    f = board(tmp_path, ["default", "cloud-first"], apps=("chain",))
    assert leaderboard(f, "--seeds", "1", "--out", str(tmp_path / "lb")).returncode == 0
    r = subprocess.run([sys.executable, "-m", "harness", "report", str(tmp_path / "lb"), "--out", str(tmp_path / "rep")],
                       cwd=REPO, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    page = tmp_path / "rep/report.html"
    dom = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=120).stdout
    assert "Leaderboard test v1" in dom
    ranked = dom.split("data-table=\"leaderboard_reschedule_sim\"")[1].split("</table>")[0]
    assert "<caption>leaderboard_reschedule_sim.csv</caption>" in ranked  # which world, and the file it is in
    assert ranked.count("<tr>") == 3 and "cloud-first" in ranked and "default" in ranked  # header + 2 policies
    assert "data-table=\"leaderboard_coverage\"" in dom and "ran on 1 of 1 apps" in dom
    shot = tmp_path / "page.png"
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", f"--screenshot={shot}",
                    "--window-size=1200,1600", page.as_uri()], capture_output=True, timeout=120)
    assert shot.exists() and shot.stat().st_size > 20_000  # figures and tables drawn, not a blank page


def test_a_track_of_several_apps_per_scenario_ranks_paper_003s_objective(tmp_path):
    """The multi-app track's shape: no apps named (each scenario's own, deployed together), one
    profile, ranked by eq. 1's objective with the MILP's gap beside; a policy whose problem is
    another sits out with its reason, and the MILP as a placer is never beaten."""
    from harness.families.rollout.world import InstanceConfig
    from studies.rollout.ground import write_track

    paths = write_track(tmp_path / "ma", InstanceConfig(near_edge=4, far_edge=1, cloud=1, apps=3), range(2))
    doc = {"version": 1, "name": "test", "tracks": [
        {"name": "multi-app", "inventory": str(tmp_path / "ma/s0/inventory.yaml"),
         "profile": str(tmp_path / "ma/s0/profile.json"), "scenarios": [str(p) for p in paths],
         "primary": "cost_delay_objective", "gap_time_limit_s": 10,
         "policies": ["default", "rollout", "cost-delay-milp", "reach"]}]}
    f = tmp_path / "board.yaml"
    f.write_text(yaml.safe_dump(doc))
    r = leaderboard(str(f), "--seeds", "1", "--jobs", "1", "--out", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr[-3000:]
    ranked = {row["policy"]: row for row in read(tmp_path / "out/ranked-sim.csv")}
    assert set(ranked) == {"default", "rollout", "cost-delay-milp"}
    assert ranked["cost-delay-milp"]["rank"] == "1" and int(ranked["cost-delay-milp"]["cells"]) == 2
    gaps = [float(row["value"]) for row in read(tmp_path / "out/leaderboard.csv")
            if row["metric"] == "cost_delay_gap" and row["policy"] == "cost-delay-milp"]
    assert len(gaps) == 2 and max(gaps) < 1e-6
    coverage = {row["policy"]: row["multi-app"] for row in read(tmp_path / "out/coverage.csv")}
    assert coverage["reach"].startswith("no model for app0+app1+app2")


LIVE_SHORT = {"name": "live-short", "description": "chain, one user, 12 s", "duration_s": 12, "app": "chain",
              "replicas": 1, "warmup_s": 2, "load": {"mode": "closed", "steps": [{"at_s": 0, "value": 1}]},
              "rescheduler": {"period_s": 5, "start_s": 2, "max_moves": 2}}


@pytest.mark.root
@pytest.mark.slow
@pytest.mark.load_tolerant
def test_both_worlds_rank_the_same_cells_and_a_track_of_another_testbed_is_named(local_testbed, tmp_path):
    """--mode both: the cells of the testbed's track played in simulation and live (one run
    directory each), a ranked table per world, Spearman's ρ of the two; the track whose inventory
    is another testbed's plays in simulation only and says why not live."""
    sc = tmp_path / "live-short.yaml"
    sc.write_text(yaml.safe_dump(LIVE_SHORT))
    doc = {"version": 1, "name": "both", "tracks": [
        {"name": "reschedule", "apps": ["chain"], "scenarios": [str(sc)], "primary": "mean_ms",
         "policies": ["default", "cloud-first", "latency-greedy"]},
        {"name": "replica-schedules", "inventory": "inventories/kubedsm-local.yaml", "apps": ["kubedsm"],
         "scenarios": ["scenarios/kubedsm/1.1_0.4.yaml"], "primary": "edge_ratio", "policies": ["default", "kubedsm"]}]}
    f = tmp_path / "board.yaml"
    f.write_text(yaml.safe_dump(doc))
    r = subprocess.run([sys.executable, "-m", "harness", "--state-dir", str(local_testbed.state_dir), "leaderboard",
                        str(f), "--mode", "both", "--seeds", "1", "--jobs", "1", "--out", str(tmp_path / "out")],
                       cwd=REPO, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    rows = read(tmp_path / "out/leaderboard.csv")
    worlds = {(row["track"], row["world"]) for row in rows}
    assert worlds == {("reschedule", "sim"), ("reschedule", "live"), ("replica-schedules", "sim")}
    live = {row["policy"] for row in read(tmp_path / "out/ranked-live.csv")}
    assert live == {"default", "cloud-first", "latency-greedy"}
    assert all((tmp_path / "out" / row["run_dir"] / "summary.json").exists() for row in rows)
    meta = json.loads((tmp_path / "out/leaderboard.json").read_text())
    assert "kubedsm-local" in meta["not_live"]["replica-schedules"] and meta["failed_cells"] == []
    rho = meta["sim_live_spearman"]
    assert rho["replica-schedules"] is None and -1 <= rho["reschedule"] <= 1
    assert "reschedule (live)" in r.stdout and "Spearman" in r.stdout
    c = local_testbed.cluster
    assert c.pods() == [] and all(c.node_up(n.name) for n in c.nodes)  # the testbed as the sweep found it


def test_a_track_in_silgpos_world_ranks_the_deployment_baselines_and_a_learner_with_its_model(tmp_path):
    models = tmp_path / "models"
    trained = subprocess.run([sys.executable, "-m", "harness", "train", "--policy", "sil-gpo", "--instance", "0",
                              "--episodes", "1", "--encoder", "mlp", "--out", str(models), "--name", "sil-gpo-seed-0"],
                             cwd=REPO, capture_output=True, text=True, timeout=300)
    assert trained.returncode == 0, trained.stderr[-2000:]
    doc = {"version": 1, "name": "deploy", "tracks": [
        {"name": "deployment", "world": "servicegraph", "apps": ["seed-0", "seed-1"], "scenarios": ["default"],
         "primary": "total_delay", "policies": ["preferred", "queue-greedy", "random", "sil-gpo", "default"],
         "reference": "preferred"}]}  # the world has no default deployer: the code's greedy is the reference
    f = tmp_path / "board.yaml"
    f.write_text(yaml.safe_dump(doc))
    r = leaderboard(str(f), "--seeds", "2", "--out", str(tmp_path / "out"), "--model-dir", str(models))
    assert r.returncode == 0, r.stderr[-3000:]
    rows = read(tmp_path / "out/leaderboard.csv")
    delays = [x for x in rows if x["metric"] == "total_delay"]
    assert {(x["policy"], x["app"]) for x in delays} == {(p, a) for p in ("preferred", "queue-greedy", "random")
                                                         for a in ("seed-0", "seed-1")} | {("sil-gpo", "seed-0")}
    assert len(delays) == 3 * 2 * 2 + 2  # policies × apps × seeds, and the learner's two seeds on its one app
    coverage = {x["policy"]: x["deployment"] for x in read(tmp_path / "out/coverage.csv")}
    assert coverage["default"].startswith("ability does not fit")
    assert coverage["sil-gpo"].startswith("ran on 1 of 2 apps; no model for seed-1")
    ranked = {x["policy"]: x for x in read(tmp_path / "out/ranked-sim.csv")}
    assert float(ranked["queue-greedy"]["mean"]) < float(ranked["random"]["mean"])
    mean = {(p, a): np.mean([float(x["value"]) for x in delays if (x["policy"], x["app"]) == (p, a)])
            for p in ("random", "preferred") for a in ("seed-0", "seed-1")}  # a cell's seeds averaged first
    assert float(ranked["preferred"]["ratio_to_reference"]) == 1.0
    assert float(ranked["random"]["ratio_to_reference"]) == pytest.approx(
        sum(mean["random", a] / mean["preferred", a] for a in ("seed-0", "seed-1")) / 2)
    assert "ratio to preferred" in r.stdout
    # every number traceable: the run's deployment scores what the row says
    from harness.families.silgpo.commands import world
    from harness.families.silgpo.world import delay

    row = next(x for x in delays if x["policy"] == "random" and x["seed"] == "1")
    run = json.loads((tmp_path / "out" / row["run_dir"] / "summary.json").read_text())
    g = world(row["app"], row["scenario"]).build()
    assert delay(g, np.array(run["deployment"])).total == pytest.approx(float(row["value"]))
    bad = dict(doc, tracks=[dict(doc["tracks"][0], apps=["chain"])])
    f.write_text(yaml.safe_dump(bad))
    r = leaderboard(str(f), "--out", str(tmp_path / "bad"))
    assert r.returncode == 2 and "apps" in r.stderr and "seed-N" in r.stderr


def test_a_track_of_one_cell_takes_its_interval_and_paired_ratio_over_the_seeds():
    """One cell (one app, one scenario, e.g. a KubeDSM workload live): the runs are the unit, so the
    interval is over the repeats and the ratio pairs the runs of one seed; two cells: the seeds are
    averaged within each and the interval is over the cells."""
    from harness.leaderboard.tables import ranked

    def row(policy, seed, v, app="a"):
        return {"track": "t", "metric": "m", "world": "live", "app": app, "scenario": "s", "policy": policy,
                "seed": seed, "value": v}

    rows = [row("default", s, v) for s, v in enumerate([10, 20, 30])] + [row("x", s, v) for s, v in enumerate([5, 10, 15])]
    one = {r.policy: r for r in ranked(rows, "t", "m", "lower", "live")}
    assert one["x"].cells == 1 and one["x"].mean == 10 and one["x"].half > 0
    assert one["x"].ratio == 0.5 and one["x"].ratio_half == 0  # paired by seed: half of default's every time
    rows += [row(p, s, 40, app="b") for p in ("default", "x") for s in range(3)]
    two = {r.policy: r for r in ranked(rows, "t", "m", "lower", "live")}
    assert two["x"].cells == 2 and two["x"].mean == (10 + 40) / 2 and two["x"].ratio == (0.5 + 1.0) / 2


def test_train_makes_the_missing_models_the_same_in_a_pool_or_on_ray_and_a_failing_one_sits_out(tmp_path):
    """``--train``: each learner's missing model is made with the file's flags, then plays; Ray makes
    the same weights; a training that fails twice is reported and its policy sits out as "no model"."""
    import torch

    doc = {"version": 1, "name": "trained", "train": {"sil-gpo": "--encoder mlp --episodes 2",
                                                      "rsdql-deploy": "--no-such-flag"},
           "tracks": [{"name": "deployment", "world": "servicegraph", "apps": ["seed-0"],
                       "scenarios": ["default"], "primary": "total_delay",
                       "policies": ["preferred", "sil-gpo", "rsdql-deploy"], "reference": "preferred"}]}
    f = tmp_path / "board.yaml"
    f.write_text(yaml.safe_dump(doc))
    runs = {}
    for how, extra in (("pool", []), ("ray", ["--ray", "local"])):
        runs[how] = leaderboard(str(f), "--seeds", "1", "--jobs", "2", "--train", "--model-dir", str(tmp_path / how),
                                "--out", str(tmp_path / f"out-{how}"), *extra)
        assert runs[how].returncode == 0, runs[how].stderr[-3000:]
    models = sorted(p.name for p in (tmp_path / "pool").glob("*.pt"))
    assert models == ["sil-gpo-seed-0.pt"]  # rsdql-deploy's failed: none half-written
    assert not list((tmp_path / "pool").glob("*.part"))
    for name in models:
        a, b = (torch.load(tmp_path / how / name, weights_only=False)["state_dict"] for how in ("pool", "ray"))
        assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
        assert json.loads((tmp_path / "pool" / name).with_suffix(".json").read_text())["args"]["encoder"] == "mlp"
    assert "training rsdql-deploy-seed-0.pt failed twice" in runs["pool"].stderr and "no-such-flag" in runs["pool"].stderr
    coverage = {x["policy"]: x["deployment"] for x in read(tmp_path / "out-pool/coverage.csv")}
    assert coverage["sil-gpo"] == "ran on 1 of 1 apps" and coverage["rsdql-deploy"].startswith("no model for seed-0")
    assert (tmp_path / "out-pool/leaderboard.csv").read_text() == (tmp_path / "out-ray/leaderboard.csv").read_text()
