"""Paper 003's problem on the one ground: a generated instance written as an inventory, apps, a
profile and a scenario (``studies.rollout.ground``) plays in ``harness evaluate``'s run, and each
run's summary scores its placement exactly as the instance itself does."""

from __future__ import annotations

import json

import numpy as np
import pytest

from harness.errors import UserError
from harness.policies import build
from harness.families.rollout.world import InstanceConfig, generate
from studies.rollout.ground import play, write

SMALL = InstanceConfig(near_edge=4, far_edge=1, cloud=1, apps=3)


@pytest.mark.parametrize("seed", [0, 1])
def test_the_ground_scores_greedy_and_rollout_as_the_instance_does(tmp_path, seed):
    inst = generate(SMALL, seed)
    write(inst, tmp_path / "inst")
    policies = {"greedy": build("greedy-bestfit"), "rollout": build("rollout", beta=0.9, gamma=0.8),
                "milp": build("cost-delay-milp", time_limit_s=10)}
    runs = play(tmp_path / "inst", policies, tmp_path / "results", gap_time_limit_s=10)
    for label in ("greedy", "rollout"):
        direct = policies[label].solve_instance(inst)
        got = runs[label]["metrics"]["cost_delay"]
        assert got["objective"] == pytest.approx(direct.objective, abs=1e-9)
        assert got["rejected"] == direct.parts["rejected"] and got["over_cap"] == 0 and got["over_capacity"] == 0
        assert got["gap"] >= -1e-9 and got["gap_reference"] == "optimum"
    milp = runs["milp"]["metrics"]["cost_delay"]
    assert milp["gap"] == pytest.approx(0, abs=1e-6)  # the MILP as a placer reaches the optimum it is measured by
    assert milp["objective"] <= min(runs[p]["metrics"]["cost_delay"]["objective"] for p in ("greedy", "rollout")) + 1e-9
    assert runs["greedy"]["moves"] == 0  # max_moves 0: placed once, never rescheduled


def test_a_policy_that_ignores_the_caps_is_scored_with_its_breaches(tmp_path):
    inst = generate(SMALL, 0)
    write(inst, tmp_path / "inst")
    got = play(tmp_path / "inst", {"default": build("default")}, tmp_path / "results")["default"]["metrics"]["cost_delay"]
    # kube's default scheduler spreads the pods with no idea of delay: every app is placed, its
    # objective is above the optimum's, and the breaches are counted, not raised
    assert got["rejected"] == 0 and got["over_cap"] >= 0
    assert got["objective"] > build("greedy-bestfit").solve_instance(inst).objective


def test_an_app_no_node_can_hold_stays_pending_and_counts_as_rejected(tmp_path):
    inst = generate(SMALL, 0)
    folder = tmp_path / "inst"
    write(inst, folder)
    app = json.loads((folder / "app2.json").read_text())
    app["services"]["ms0"]["cpu-requests"] = float(inst.infra.cpu.max() + 1)  # more than any one node has
    assert inst.infra.cpu.sum() > inst.infra.cpu.max() + 1 + sum(a.cpu.sum() for a in inst.apps)  # not the testbed's
    (folder / "app2.json").write_text(json.dumps(app))
    run = play(folder, {"rollout": build("rollout")}, tmp_path / "results")["rollout"]
    assert run["metrics"]["cost_delay"]["rejected"] == 1
    assert run["metrics"]["rejected"] == len(app["services"])  # its pods left pending, each an event
    assert run["metrics"]["rejection_rate"] == pytest.approx(len(app["services"]) / sum(len(a.cpu) for a in inst.apps), abs=1e-4)


def test_the_milp_placer_refuses_an_app_without_sources(tmp_path):
    from harness.policies.contract import ClusterView
    from harness.scenarios.session import prepare
    from harness.spec.inventory import load_inventory, default_inventory_path
    from harness.testbed.simulated import simulated_state
    from harness import shipped

    state = simulated_state(load_inventory(default_inventory_path()))
    session = prepare("steady", ["default"], state, None, None, shipped.find("models"), tmp_path)
    from harness.rescheduler.live import LiveView
    from harness.testbed.simulated import SimCluster

    view: ClusterView = LiveView(session.app, session.profile, state, SimCluster(state)).view()[0]
    with pytest.raises(UserError, match="sources"):
        build("cost-delay-milp").check(view)


def test_the_written_instance_keeps_the_instance_exactly(tmp_path):
    """What the files say is what the instance held: capacities, costs, delays (RTT / 2), requests."""
    from harness.families.rollout import cost_delay
    from harness.rescheduler.live import LiveView
    from harness.scenarios.session import prepare
    from harness.spec.inventory import load_inventory
    from harness.testbed.simulated import SimCluster, simulated_state
    from harness import shipped

    inst = generate(SMALL, 3)
    write(inst, tmp_path / "inst")
    state = simulated_state(load_inventory(tmp_path / "inst" / "inventory.yaml"))
    s = prepare(str(tmp_path / "inst" / "multiapp.yaml"), ["default"], state, None, tmp_path / "inst" / "profile.json",
                shipped.find("models"), tmp_path / "results")
    back = cost_delay.problem(LiveView(s.app, s.profile, state, SimCluster(state)).view()[0]).instance
    for field in ("cpu", "ram", "op_cost", "net_cost", "delay"):
        assert np.array_equal(getattr(back.infra, field), getattr(inst.infra, field)), field
    for a, b in zip(back.apps, inst.apps):
        assert a.source == b.source and a.arcs == b.arcs
        for field in ("cpu", "ram", "data"):
            assert np.array_equal(getattr(a, field), getattr(b, field)), field
    assert back.w == inst.w


def test_a_simulated_session_asks_each_policy_to_check_the_cluster_first(tmp_path):
    """cost-delay-milp on an app without sources: one line before any run, not a failed deployment."""
    from harness import shipped
    from harness.scenarios.session import prepare, run_simulated
    from harness.spec.inventory import default_inventory_path, load_inventory
    from harness.testbed.simulated import simulated_state

    state = simulated_state(load_inventory(default_inventory_path()))
    session = prepare("steady", ["cost-delay-milp"], state, None, None, shipped.find("models"), tmp_path)
    with pytest.raises(UserError, match="paper 003's problem only"):
        run_simulated(state, session, 1)
    assert not any(session.out.glob("*/summary.json"))
