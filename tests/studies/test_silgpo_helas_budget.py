"""HELAS's budget check: each heaviest point placed with the sweep's budget and a larger one, the
first the sweep table's own placement, the change from it printed and written."""

import csv
import sys

import pytest

from studies.silgpo import helas_budget, sweeps


@pytest.fixture
def one_generation(monkeypatch):
    """HELAS with one generation, for the check's budget and the sweep's: seconds, not minutes."""
    from harness.families.silgpo import baselines

    for module in (helas_budget, baselines):
        monkeypatch.setattr(module, "helas_generations", lambda g: 1)
    return baselines


def run_check(monkeypatch, capsys, out_dir, *flags) -> tuple[str, list[dict]]:
    """``helas_budget`` run with ``flags``: (what it printed, the rows of its CSV)."""
    monkeypatch.setattr(sys, "argv", ["helas_budget", *flags, "--out", str(out_dir)])
    assert helas_budget.main() == 0
    out = capsys.readouterr().out
    with open(out_dir / "helas_budget.csv") as f:
        return out, list(csv.DictReader(f))


def test_each_heaviest_point_at_two_budgets_the_first_the_sweeps(monkeypatch, tmp_path, capsys, one_generation):
    baselines = one_generation
    runs = []  # each placement made once: a --jobs 1 result asked for twice would run HELAS again
    monkeypatch.setitem(baselines.DEPLOYERS, "helas", lambda *a, **kw: runs.append(kw) or baselines.helas(*a, **kw))
    monkeypatch.setattr(sweeps, "agent_delay", lambda *a, **kw: None)  # no model done: the margins wait
    out, rows = run_check(monkeypatch, capsys, tmp_path, "--times", "3")
    assert [(r["sweep"], r["value"], r["generations"]) for r in rows] == [
        ("arrival", "5-7", "1"), ("arrival", "5-7", "3"), ("chain", "6-8", "1"), ("chain", "6-8", "3"),
        ("requests", "50", "1"), ("requests", "50", "3")]
    assert [kw["generations"] for kw in runs] == [1, 3] * 3
    assert float(rows[4]["total_delay"]) == pytest.approx(sweeps.placed_delay("requests", 50, 0, "helas")[0], rel=1e-12)
    more, base = float(rows[5]["total_delay"]), float(rows[4]["total_delay"])
    larger = [line for line in out.splitlines() if line.startswith("  requests 50 ")][1]
    assert larger.endswith(f"{100 * (more / base - 1):+.1f} %")  # the requests point's larger budget
    assert "  requests 50: sil-gpo's models not all done" in out


def test_more_instances_and_the_agents_margin_at_each_budget(monkeypatch, tmp_path, capsys, one_generation):
    # two points, two instances each: each point's margin pairs the agent's reading on an instance
    # with HELAS's placement of that same point and instance, at each budget
    from harness.results.stats import mean_ci95

    agent = {("arrival", 0): 30.0, ("arrival", 1): 20.0, ("chain", 0): 10.0, ("chain", 1): 12.0}
    monkeypatch.setattr(sweeps, "agent_delay", lambda figure, value, k, *a, **kw: sweeps.Reading(agent[figure, k], 0))
    out, rows = run_check(monkeypatch, capsys, tmp_path, "--points", "chain,arrival", "--instances", "2")
    assert [(r["value"], r["instance_seed"], r["budget"]) for r in rows] == [
        ("5-7", "3", "sweep"), ("5-7", "3", "x2"), ("5-7", "4", "sweep"), ("5-7", "4", "x2"),
        ("6-8", "3", "sweep"), ("6-8", "3", "x2"), ("6-8", "4", "sweep"), ("6-8", "4", "x2")]
    for figure, value in (("arrival", "5-7"), ("chain", "6-8")):
        said = []
        for budget in ("sweep", "x2"):
            helas = [float(r["total_delay"]) for r in rows if (r["value"], r["budget"]) == (value, budget)]
            m, h = mean_ci95([agent[figure, k] / helas[k] - 1 for k in range(2)])
            said.append(f"{100 * m:+.1f} ± {100 * h:.1f} % ({budget})")
        assert f"{figure} {value}: sil-gpo (best evaluation) against helas, paired over 2: {', '.join(said)}" in out


def test_an_unknown_point_is_refused(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["helas_budget", "--points", "arrival,storage"])
    with pytest.raises(SystemExit) as stop:
        helas_budget.main()
    assert stop.value.code == 2 and "--points: 'storage' is not one of arrival, chain, requests" in capsys.readouterr().err


@pytest.mark.parametrize("instances", ["0", "4"])
def test_instances_outside_the_sweeps_three_are_refused(monkeypatch, capsys, instances):
    monkeypatch.setattr(sys, "argv", ["helas_budget", "--instances", instances])
    with pytest.raises(SystemExit) as stop:
        helas_budget.main()
    assert stop.value.code == 2 and "--instances" in capsys.readouterr().err


def test_a_budget_not_above_the_sweeps_is_refused(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["helas_budget", "--times", "1"])
    with pytest.raises(SystemExit) as stop:
        helas_budget.main()
    assert stop.value.code == 2 and "--times must be 2 or more" in capsys.readouterr().err
