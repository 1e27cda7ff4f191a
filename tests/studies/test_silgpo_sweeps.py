"""Figs 8-10's table once the agent is ready at a point: its margins against the paper's baselines
and the best one, and its rank. No model is trained: the agent's delay is given."""

import sys

import numpy as np
import pytest

from studies.silgpo import sweeps


def ready_table(monkeypatch, capsys, tmp_path, figure: str, seeds: int, only: str) -> str:
    """What ``sweeps --ready-only`` prints for one figure with the agent's readings as patched."""
    monkeypatch.setattr(sys, "argv", ["sweeps", "--figures", figure, "--seeds", str(seeds), "--only", only,
                                      "--agent-dir", str(tmp_path / "agents"), "--ready-only", "--out", str(tmp_path)])
    assert sweeps.main() == 0
    return capsys.readouterr().out


def test_a_ready_agent_gets_its_margins_and_rank(monkeypatch, tmp_path, capsys):
    # the agent at half the code's greedy: first everywhere, about −50 % against each baseline
    def half_of_the_greedy(figure, value, k, folder, flags, ready_only=False):
        g = sweeps.instance(figure, value, k)
        return sweeps.Reading(0.5 * sweeps.delay(g, sweeps.DEPLOYERS["preferred"](g, None)).total, None)

    monkeypatch.setattr(sweeps, "agent_delay", half_of_the_greedy)
    out = ready_table(monkeypatch, capsys, tmp_path, "arrival", 1, "preferred,mfds-fpr")
    # a margin against the paper's baseline at each of 5 points, then over them three ways
    assert out.count("mfds-fpr -") == 8
    assert "best stable (preferred) -50.0 %" in out
    assert ("sil-gpo-best-evaluation first at 5 of 5 (5 with unstable queues not recorded) "
            "(among the paper's mfds-fpr: 5)") in out
    assert out.count("sil-gpo-best-evaluation*") == 5  # in each ranking: its queues' stability not recorded
    assert (tmp_path / "sweeps.csv").read_text().count("sil-gpo-best-evaluation") == 5


def test_a_point_with_a_late_model_continued_gets_a_second_line(monkeypatch, tmp_path, capsys):
    # at the code's greedy by the recipe; a late model continued to 3,000 episodes goes 10 % below it
    def the_greedy(figure, value, k, folder, flags, ready_only=False):
        g = sweeps.instance(figure, value, k)
        return sweeps.Reading(sweeps.delay(g, sweeps.DEPLOYERS["preferred"](g, None)).total, 0)

    monkeypatch.setattr(sweeps, "agent_delay", the_greedy)
    monkeypatch.setattr(sweeps, "continued_delay", lambda *a: (sweeps.Reading(0.9 * the_greedy(*a).delay, 0), True))
    out = ready_table(monkeypatch, capsys, tmp_path, "requests", 1, "preferred")
    assert "sil-gpo-best-evaluation first at 0 of 5" in out and out.count("best stable (preferred) +0.0 %") == 5
    assert out.count("sil-gpo-late-to-3000: ") == 5 and out.count("best stable (preferred) -10.0 %") == 5
    assert ("(5 here, 5 of them lower; HELAS's budget stays the recipe's), over its 5 points: best stable -10.0 % "
            "(mean of the points); best stable -10.0 % (summed delays); best stable -10.0 % (at 50); "
            "sil-gpo-late-to-3000 first at 5 of 5; the recipe there: best stable +0.0 % (mean of the points); "
            "best stable +0.0 % (summed delays); best stable +0.0 % (at 50); sil-gpo-best-evaluation first at 0 of 5") in out
    # the paper's Fig. 10 axis is 20-60: the margins over the points both have are given too
    assert ("over the 4 points on the paper's axis too (20, 30, 40, 50): best stable +0.0 % (mean of the points); "
            "best stable +0.0 % (summed delays); best stable +0.0 % (at 50); sil-gpo-best-evaluation first at 0 of 4") in out
    assert (tmp_path / "sweeps.csv").read_text().count("sil-gpo-late-to-3000") == 5


def test_a_continued_model_that_went_no_lower_still_counts(monkeypatch, tmp_path, capsys):
    # a point's continued line stands whether or not its late model improved: a summary over only
    # the points that improved would make going on look decisive
    def the_greedy(figure, value, k, folder, flags, ready_only=False):
        g = sweeps.instance(figure, value, k)
        return sweeps.Reading(1.05 * sweeps.delay(g, sweeps.DEPLOYERS["preferred"](g, None)).total, 0)

    def continued(figure, value, k, folder, flags):
        return sweeps.Reading((0.8 if value == 10 else 1.0) * the_greedy(figure, value, k, folder, flags).delay, 0), True

    monkeypatch.setattr(sweeps, "agent_delay", the_greedy)
    monkeypatch.setattr(sweeps, "continued_delay", continued)
    out = ready_table(monkeypatch, capsys, tmp_path, "requests", 1, "preferred")
    assert "(5 here, 1 of them lower; " in out and "sil-gpo-late-to-3000 first at 1 of 5" in out


def test_the_best_baseline_is_a_stable_one_and_an_infeasible_one_is_named(monkeypatch, tmp_path, capsys):
    # "preferred" lowest but leaving 2 queues unstable (the code scores them a flat sojourn): the
    # margin is set against the best stable baseline, and the ranking names the infeasible one
    import csv

    monkeypatch.setattr(sweeps, "placed_delay", lambda figure, value, k, name: {"preferred": (10.0, 2),
                                                                                "mfds-fpr": (20.0, 0)}[name])
    monkeypatch.setattr(sweeps, "agent_delay", lambda *a, **kw: sweeps.Reading(15.0, 0))
    out = ready_table(monkeypatch, capsys, tmp_path, "chain", 1, "preferred,mfds-fpr")
    assert out.count("preferred [infeasible: 2 unstable queues] < sil-gpo-best-evaluation < mfds-fpr") == 5
    assert out.count("mfds-fpr -25.0 %, best stable (mfds-fpr) -25.0 %") == 5
    assert "sil-gpo-best-evaluation first at 5 of 5 (among the paper's mfds-fpr: 5)" in out
    with open(tmp_path / "sweeps.csv") as f:
        unstable = {r["deployer"]: r["unstable_queues"] for r in csv.DictReader(f)}
    assert unstable == {"preferred": "2", "mfds-fpr": "0", "sil-gpo-best-evaluation": "0"}


def test_the_sweeps_margin_is_read_three_ways_and_an_unstable_agent_is_first_nowhere(monkeypatch, tmp_path, capsys):
    # the paper gives one margin per sweep without saying how: the mean of the points' margins, the
    # summed delays' ratio and the heaviest point's can differ. Here the agent halves the baseline at
    # the four light points, and is lower at the heaviest only by leaving 2 queues unstable
    heaviest = sweeps.label(sweeps.SWEEPS["chain"][-1])
    monkeypatch.setattr(sweeps, "placed_delay",
                        lambda figure, value, k, name: (40.0 if sweeps.label(value) == heaviest else 10.0, 0))
    monkeypatch.setattr(sweeps, "agent_delay", lambda figure, value, *a, **kw: sweeps.Reading(30.0, 2)
                        if sweeps.label(value) == heaviest else sweeps.Reading(5.0, 0))
    out = ready_table(monkeypatch, capsys, tmp_path, "chain", 1, "helas")
    assert ("helas -45.0 %, best stable -45.0 % (mean of the points); helas -37.5 %, best stable -37.5 % (summed "
            "delays); helas -25.0 %, best stable -25.0 % (at 6-8); sil-gpo-best-evaluation first at 4 of 5 "
            "(among the paper's helas: 4)") in out
    assert "sil-gpo-best-evaluation [infeasible: 2 unstable queues] < helas" in out


def test_an_agent_whose_queues_are_known_at_some_instances_is_marked_and_first_nowhere_unstable(
        monkeypatch, tmp_path, capsys):
    # instance 4's model was trained before the curve kept unstable queues, instance 3's after: at
    # the first point instance 3's deployment leaves one, so the agent is infeasible there; where
    # every baseline leaves one (the heaviest point) the summary says its "best" is not stable
    import csv

    first, heaviest = (sweeps.label(v) for v in (sweeps.SWEEPS["chain"][0], sweeps.SWEEPS["chain"][-1]))
    monkeypatch.setattr(sweeps, "placed_delay",
                        lambda figure, value, k, name: (10.0, int(sweeps.label(value) == heaviest)))
    monkeypatch.setattr(sweeps, "agent_delay", lambda figure, value, k, *a, **kw: sweeps.Reading(
        5.0, (int(sweeps.label(value) == first) if k == 0 else None)))
    out = ready_table(monkeypatch, capsys, tmp_path, "chain", 2, "helas")
    assert out.count("sil-gpo-best-evaluation [infeasible: 1 unstable queues]* < helas") == 1
    assert out.count("sil-gpo-best-evaluation* < helas") == 4
    assert "best, none stable (helas) -50.0 ± 0.0 %" in out  # the heaviest point's line (two instances alike)
    assert ("best (none stable at 1 of 5 points) -50.0 % (mean of the points)" in out
            and "sil-gpo-best-evaluation first at 4 of 5 (4 with unstable queues not recorded)" in out)
    with open(tmp_path / "sweeps.csv") as f:
        agent = [(r["value"], r["unstable_queues"]) for r in csv.DictReader(f) if r["deployer"] == sweeps.AGENT]
    assert agent[:4] == [(first, "1"), (first, ""), ("3-5", "0"), ("3-5", "")]


def test_a_kept_curve_is_read_not_trained(tmp_path, capsys):
    # the repository keeps a finished sweep model's .json and curve, not its weights: its best is
    # read from them, and nothing says it was trained
    import shutil

    from harness.families.silgpo.agent import Curve

    path, _ = sweeps.agent_model("chain", (2, 4), 0, sweeps.AGENT_DIR, sweeps.RECIPE)
    folder = tmp_path / "sweeps"
    folder.mkdir()
    for suffix in (".json", ".curve.csv"):
        shutil.copy(path.with_suffix(suffix), folder)
    got = sweeps.agent_delay("chain", (2, 4), 0, folder, sweeps.RECIPE, ready_only=True)
    curve = Curve.read(path)
    assert got == sweeps.Reading(curve.best(within=sweeps.EPISODES), None)  # trained before unstable queues were kept
    as_trained = sweeps.trained_delay("chain", (2, 4), 0, folder, sweeps.RECIPE)  # its evaluation at the last episode
    assert as_trained == sweeps.Reading(curve.delay[curve.episodes.index(sweeps.EPISODES)], None)
    assert as_trained.delay >= got.delay  # no evaluation is below the best
    assert "trained" not in capsys.readouterr().err
    assert not (folder / path.name).exists()


def test_the_as_trained_reading_is_the_deployment_the_saved_weights_build():
    # the ranking plays a kept model's weights; the sweeps keep no weights and read the curve's
    # evaluation at the last episode instead: the same deployment, so the same number
    from harness.families.silgpo.agent import Curve, deploy, load_actor
    from harness.families.silgpo.world import code_instance

    path, _ = sweeps.agent_model("arrival", (2, 4), 0, sweeps.AGENT_DIR, sweeps.RECIPE)  # the ranking's seed 1
    g = code_instance(sweeps.ServiceGraphConfig(silgpo_compat=True))
    played = sweeps.delay(g, deploy(g, load_actor(path, g)[0]))
    curve = Curve.read(path)
    assert played.total == curve.delay[curve.episodes.index(sweeps.EPISODES)] != curve.best()


def test_the_baselines_place_the_same_in_two_processes_as_in_one(monkeypatch, tmp_path, capsys):
    # --jobs spreads the placements over processes; the table and the CSV must not change with it,
    # and each row is its deployer's placement of its own instance, with its random stream
    import csv

    tables = {}
    for jobs in (1, 2):
        out = tmp_path / f"jobs{jobs}"
        monkeypatch.setattr(sys, "argv", ["sweeps", "--figures", "requests", "--seeds", "2", "--only",
                                          "preferred,mfds-fpr", "--jobs", str(jobs), "--out", str(out)])
        assert sweeps.main() == 0
        tables[jobs] = [line for line in capsys.readouterr().out.splitlines() if " s; wrote " not in line]
    assert tables[1] == tables[2]
    assert (tmp_path / "jobs1" / "sweeps.csv").read_text() == (tmp_path / "jobs2" / "sweeps.csv").read_text()
    with open(tmp_path / "jobs2" / "sweeps.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 5 * 2 * 2  # points × instances × deployers
    for r in rows:
        k = int(r["instance_seed"]) - sweeps.FIRST_SEED
        g = sweeps.instance("requests", int(r["value"]), k)
        placed = sweeps.DEPLOYERS[r["deployer"]](g, np.random.default_rng(k))
        assert float(r["total_delay"]) == pytest.approx(sweeps.delay(g, placed).total, rel=1e-12)


def test_an_interrupt_stops_the_placing_processes_at_once():
    # Ctrl-C (or any error) must not wait for the placements running or queued (HELAS: minutes each)
    import os
    import time

    t = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        with sweeps.placements(2) as submit:
            workers = {submit(os.getpid).result() for _ in range(4)}
            for _ in range(6):
                submit(time.sleep, 120)
            raise KeyboardInterrupt
    assert time.monotonic() - t < 60  # not one sleep's 120 s: the workers are killed, the queue dropped
    for pid in workers:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_jobs_below_one_is_refused(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["sweeps", "--jobs", "0"])
    with pytest.raises(SystemExit) as stop:
        sweeps.main()
    assert stop.value.code == 2
    assert "--jobs must be 1 or more, not 0" in capsys.readouterr().err


def test_every_point_reads_a_model_the_queue_trains():
    # Fig. 10's 30 requests is Fig. 8's λ 2-4 (the default setting): it must read that point's
    # models, which studies.silgpo.trainings trains once, not ask for two more of its own
    folder = sweeps.AGENT_DIR
    queued = {sweeps.agent_model(f, v, k, folder, sweeps.RECIPE)[0] for f, v in sweeps.distinct_points() for k in range(3)}
    asked = {sweeps.agent_model(f, v, k, folder, sweeps.RECIPE)[0]
             for f, values in sweeps.SWEEPS.items() for v in values for k in range(3)}
    assert asked == queued
    assert len(queued) == 14 * 3
    assert sweeps.agent_model("requests", 30, 1, folder, sweeps.RECIPE) == sweeps.agent_model("arrival", (2, 4), 1, folder,
                                                                                             sweeps.RECIPE)


def test_the_figure_marks_a_point_where_a_deployment_leaves_a_queue_unstable(tmp_path):
    """A point is hollow where a known deployment leaves a queue at ρ ≥ 1; an agent's reading
    whose queues were not recorded ("") is not marked; the figure is written."""
    rows = [{"sweep": "arrival", "value": v, "deployer": d, "total_delay": t, "unstable_queues": u}
            for v, d, t, u in [("1-3", "mfds-fpr", 10.0, 0), ("1-3", "mfds-fpr", 12.0, 2),
                               ("2-4", "mfds-fpr", 20.0, 0), ("1-3", sweeps.AGENT, 9.0, ""),
                               ("2-4", sweeps.AGENT, 19.0, 1), ("1-3", sweeps.CONTINUED, 8.0, 0)]]
    assert sweeps.unstable_points(rows, "arrival", "mfds-fpr") == {"1-3"}
    assert sweeps.unstable_points(rows, "arrival", sweeps.AGENT) == {"2-4"}
    assert sweeps.unstable_points(rows, "chain", "mfds-fpr") == set()
    assert sweeps.plot(rows, tmp_path / "sweeps.png").stat().st_size > 0


def test_a_margin_s_interval_is_paired_by_instance():
    # the agent 20 % below HELAS on three instances of very different size: its margin is exactly
    # −20 %, with no spread, though the delays themselves spread widely; against a baseline it beats
    # by 10, 20 and 30 %, the interval is Student's over the three ratios
    runs = {"helas": [10.0, 50.0, 200.0], "mfds-fpr": [10.0, 50.0, 200.0], sweeps.AGENT: [8.0, 40.0, 160.0]}
    runs["mfds-fpr"] = [a / r for a, r in zip(runs[sweeps.AGENT], (0.9, 0.8, 0.7))]
    m = sweeps.margins_at(runs, {n: [0, 0, 0] for n in runs}, ["helas", "mfds-fpr"], sweeps.AGENT)
    assert m.gaps["helas"] == pytest.approx(-20.0) and m.spread["helas"] == pytest.approx(0.0, abs=1e-9)
    assert m.gaps["mfds-fpr"] == pytest.approx(-20.0)
    assert m.spread["mfds-fpr"] == pytest.approx(4.303 * 10.0 / np.sqrt(3), rel=1e-3)
    assert sweeps._gap(m, "mfds-fpr") == "-20.0 ± 24.8 %"
