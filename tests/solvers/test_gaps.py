"""harness evaluate's optimality gaps: 0 for the optimum, never negative, labelled."""

import pytest

from harness.policies import build
from harness.rescheduler.evaluate import run_policy
from harness.rescheduler.gaps import gaps
from harness.sim.ceenv import load_dynamics
from tests.conftest import REPO


def test_gaps_against_the_exact_optimum():
    _, _, dyn = load_dynamics(REPO / "workloads/aggregator-parallel.json",
                              REPO / "profiles/aggregator-parallel.reach-local.json")
    seeds = [0, 1]
    finals = {}
    for name in ("optimal", "default", "rollout"):
        finals[name] = []
        run_policy(dyn, build(name), name, 8, seeds, finals=finals[name])
    g = gaps(dyn, 8, seeds, finals, time_limit=60)
    assert {x.reference for x in g.values()} == {"optimum"}
    assert g["optimal"].gap == pytest.approx(0, abs=1e-9)
    assert g["default"].gap > 0.01  # the default scheduler ignores latency
    assert all(x.gap >= -1e-9 and x.gap == pytest.approx(x.gap_to_bound) for x in g.values())


def test_a_time_limit_too_short_labels_the_gap_a_bound():
    _, _, dyn = load_dynamics(REPO / "workloads/chain.json", REPO / "profiles/chain.reach-local.json")
    finals = {"default": []}
    run_policy(dyn, build("default"), "default", 20, [0], finals=finals["default"])
    g = gaps(dyn, 20, [0], finals, time_limit=0.5)["default"]
    assert g.reference == "bound"
    assert 0 < g.gap <= g.gap_to_bound  # the bound is below the best known placement
