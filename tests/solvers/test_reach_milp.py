"""REACH's model as a MILP: the same optimum as exhaustive search."""

import numpy as np
import pytest

from harness.policies import build
from harness.rescheduler.evaluate import SimWorld, run_policy, scenario
from harness.rescheduler.gaps import problem_of
from harness.sim.ceenv import load_dynamics
from harness.solvers import reach_milp
from tests.conftest import REPO


@pytest.mark.parametrize("app,pods,seed", [("chain", 4, 0), ("aggregator-parallel", 4, 1), ("aggregator-sequential", 8, 2),
                                           ("chain", 8, 3)])
def test_milp_optimum_equals_exhaustive_search(app, pods, seed):
    _, _, dyn = load_dynamics(REPO / f"workloads/{app}.json", REPO / f"profiles/{app}.reach-local.json")
    view = SimWorld(dyn, scenario(dyn, pods, seed)).view()
    sol = reach_milp.solve(problem_of(view, {s: pods // dyn.S for s in dyn.model.services}), 60)
    exhaustive = run_policy(dyn, build("optimal"), "optimal", pods, [seed])
    assert sol.exact
    assert sol.latency_ms == pytest.approx(exhaustive.latency_ms, abs=1e-6)
    assert sol.counts.sum(axis=1).tolist() == [pods // dyn.S] * dyn.S
    # and the placement respects the scenario's room
    used = sol.counts.T @ np.array([view.request(s)[0] for s in dyn.model.services])
    assert (used <= view.cap_cpu - view.background_cpu + 1e-9).all()
