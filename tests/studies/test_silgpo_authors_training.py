"""The authors' own training set beside harness's agent (``studies.silgpo.authors_training``): its
command line and the comparison it prints from kept runs (training needs their code, which is
never in the repository)."""

import argparse
import sys

import pytest

from studies.silgpo import authors_training


def test_a_point_is_read_as_harness_train_takes_it():
    assert authors_training.point("requests=10") == ("requests", 10)
    assert authors_training.point("chain=2,4") == ("chain", (2, 4))
    for bad in ("requests=11", "chain=2,5", "speed=1", "requests="):
        with pytest.raises(argparse.ArgumentTypeError, match="not a point of Figs 8-10"):
            authors_training.point(bad)


def test_training_without_their_code_is_one_line_and_status_2(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(sys, "argv", ["authors_training", "--authors", str(tmp_path), "--point", "requests=10"])
    assert authors_training.main() == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "main.py: no such file" in err[0]
    monkeypatch.setattr(sys, "argv", ["authors_training"])
    assert authors_training.main() == 2


def test_a_kept_run_is_set_beside_harness_agent_and_their_greedy(monkeypatch, tmp_path, capsys):
    """Their best, where it came, its value at the end, against their greedy (9.634 at 10 requests,
    seed 3) — and harness's sweeps model of the same instance over the same evaluations; each
    side's mean over its seeds."""
    from harness.families.silgpo.agent import Curve

    rows = [(10 * k, 12.0 - 0.01 * k) for k in range(1, 200)] + [(2000, 9.634)]
    (tmp_path / "requests-10-t7.csv").write_text("episode,delay\n" + "".join(f"{e},{d}\n" for e, d in rows))
    monkeypatch.setattr(authors_training, "RUNS", tmp_path)
    assert authors_training.compare() == 0
    out = capsys.readouterr().out
    assert "requests 10 (their generator's seed 3), 2000 episodes; their greedy 9.634" in out
    theirs = next(line for line in out.splitlines() if "their code, torch seed 7" in line)
    assert "9.634 ( 2000)" in theirs and "0.0%" in theirs
    ours = Curve.read(authors_training.AGENT_DIR / "sil-gpo-requests-10-a3.pt").delay[:200]
    mine = next(line for line in out.splitlines() if "harness's agent, seed 1 (sweeps)" in line)
    assert f"{min(ours):.3f}" in mine and f"{ours[-1]:.3f}" in mine
    assert "their code: best 9.634 ± 0.000" in out and f"harness's agent: best {min(ours):.3f}" in out
    assert "(1 seed)" in out and "Welch" not in out  # one seed a side: no difference to take


def test_harness_seed_1_is_the_sweeps_model_and_others_are_kept_beside_the_runs():
    path, argv = authors_training.harness_model("requests", 10, 1)
    assert path == authors_training.AGENT_DIR / "sil-gpo-requests-10-a3.pt" and argv[-2:] == ["--seed", "1"]
    path, argv = authors_training.harness_model("requests", 10, 2)
    assert path.parent == authors_training.RUNS and argv[-2:] == ["--seed", "2"]
    assert argv[:-2] == authors_training.harness_model("requests", 10, 1)[1][:-2]


def test_no_kept_run_is_status_2(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(authors_training, "RUNS", tmp_path)
    assert authors_training.compare() == 2
    assert "no kept run" in capsys.readouterr().err


def test_their_greedy_is_theirs_where_it_overfills_a_server():
    """Their ``greedy_deployment()`` places every instance on its preferred server, room or not:
    its delay equals their traced greedy episode's at every point, overfilled ones included."""
    import json
    from pathlib import Path

    from studies.silgpo.sweeps import FIRST_SEED, SWEEPS, instance, label

    trace = json.loads((Path(__file__).parents[1] / "sim" / "data" / "silgpo_authors_sweeps.json").read_text())
    overfilled = 0
    for p in trace["points"]:
        value = next(v for v in SWEEPS[p["figure"]] if label(v) == p["value"])
        g = instance(p["figure"], value, p["seed"] - FIRST_SEED)
        assert authors_training.their_greedy(g) == pytest.approx(p["greedy"]["delays"][-1], rel=1e-9)
        overfilled += 0 in p["greedy"]["fits"]
    assert overfilled == 6


def test_a_run_of_no_point_and_harness_seed_1_are_refused(monkeypatch, tmp_path, capsys):
    (tmp_path / "requests-11-t1.csv").write_text("episode,delay\n10,1.0\n")
    monkeypatch.setattr(authors_training, "RUNS", tmp_path)
    assert authors_training.compare() == 2
    assert "'requests-11' is not a point of Figs 8-10" in capsys.readouterr().err
    monkeypatch.setattr(sys, "argv", ["authors_training", "--point", "requests=10", "--harness-seed", "1"])
    assert authors_training.main() == 2
    assert "the sweeps' own model" in capsys.readouterr().err
