"""Paper 003's MILP against brute force, and what its formulation choices must not change."""

import itertools

import numpy as np
import pytest

from harness.families.rollout.world import InstanceConfig, generate
from harness.families.rollout import milp as multiapp_milp


def tiny(seed: int):
    """3-4 nodes over the three layers, 2-3 apps of 1-2 microservices: at most 4^6 assignments.
    Capacities small enough that capacity and the delay caps bind on many of them."""
    rng = np.random.default_rng(seed)
    cfg = InstanceConfig(near_edge=int(rng.integers(1, 3)), far_edge=1, cloud=1, apps=int(rng.integers(2, 4)),
                         microservices=(1, 2), near_cpu=(1, 2), near_ram=(1, 2), far_cpu=(1, 3), far_ram=(1, 3),
                         cloud_cpu=(2, 4), cloud_ram=(2, 4), ms_cpu=(0.3, 1.2), ms_ram=(0.3, 1.2),
                         arc_lambda=(3, 40), w=float(rng.choice([0.0, 0.01, 0.5, 1.0])))
    return generate(cfg, seed)


def brute_force(inst) -> float:
    sizes = [len(a.cpu) for a in inst.apps]
    best = np.inf
    for flat in itertools.product(range(inst.infra.V), repeat=sum(sizes)):
        assign, k = [], 0
        for n in sizes:
            assign.append(np.array(flat[k:k + n]))
            k += n
        try:
            best = min(best, inst.evaluate(assign)["objective"])
        except ValueError:
            continue
    return best


def test_milp_equals_brute_force_on_50_tiny_instances():
    feasible = 0
    for seed in range(50):
        inst = tiny(seed)
        expected = brute_force(inst)
        out = multiapp_milp.solve(inst, time_limit=30)
        if np.isinf(expected):
            assert out.status == "infeasible", seed
            continue
        feasible += 1
        assert out.status == "optimal", seed
        assert out.objective == pytest.approx(expected, abs=1e-6), seed
        assert out.bound == pytest.approx(expected, abs=1e-5), seed
    assert feasible >= 40  # the comparison is not vacuous


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_printed_and_summed_eq7_have_the_same_optimum(seed):
    inst = tiny(100 + seed)
    a = multiapp_milp.solve(inst, 30, theta="printed")
    b = multiapp_milp.solve(inst, 30, theta="summed")
    assert a.status == b.status == "optimal"
    assert a.objective == pytest.approx(b.objective, abs=1e-6)


def test_time_limit_still_gives_the_incumbent_and_a_bound_below_it():
    inst = generate(InstanceConfig(apps=20), 0)  # does not solve in 1 s here
    out = multiapp_milp.solve(inst, time_limit=1.0)
    assert out.status == "time limit"
    assert np.isfinite(out.objective) and out.bound <= out.objective + 1e-9
    assert out.parts["rejected"] == 0  # the incumbent is a whole, feasible assignment (evaluate checked it)
