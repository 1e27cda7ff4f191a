"""The latency model reads RTTs per group of nodes: on a state that holds them so (a simulated
testbed) it predicts exactly what it predicts from every pair's RTT, calibration overheads and
a latency change included; the dense matrix is built only when asked."""

from __future__ import annotations

import numpy as np
import pytest

from harness.generators.callgraph import app as generated_app
from harness.generators.continuum import continuum
from harness.generators.profile import modelled_profile
from harness.sim.queueing import QueueingModel
from harness.sim.topology import model_for
from harness.sim.trace_replay import replay_ms
from harness.spec.app import load_app, parse_app
from harness.spec.inventory import Inventory, check_semantics, load_inventory
from harness.spec.loader import parse_model
from harness.spec.profile import Calibration, Profile, load_profile
from harness.testbed.simulated import simulated_state
from tests.conftest import REPO


def dense(state):
    """The same state with every pair's RTT instead of the groups (the form a live testbed's has)."""
    return state.model_copy(update={"rtt_groups": None, "rtt_configured_ms": state.configured_rtt().matrix()})


def placements(model, k: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(k, model.S, len(model.topo.nodes))).astype(float)
    X[:, :, 0] += 1  # every service has a pod
    return X


def same(a, b, X) -> None:
    assert np.array_equal(a.D, b.D)
    assert np.array_equal(a.topo.user_rtt, b.topo.user_rtt)
    assert np.array_equal(a.latency(X), b.latency(X))
    assert a.upper_bound_ms() == b.upper_bound_ms()
    assert QueueingModel(a).latency(X[0], 3.0) == QueueingModel(b).latency(X[0], 3.0)
    assert QueueingModel(a).closed_latency(X[1], 4) == QueueingModel(b).closed_latency(X[1], 4)
    assert np.array_equal(replay_ms(a, X[2], np.linspace(0, 3, 25), seed=2), replay_ms(b, X[2], np.linspace(0, 3, 25), seed=2))


@pytest.mark.parametrize("calibrated", [False, True])
def test_reach_testbed_grouped_or_dense_gives_the_same_predictions(calibrated):
    profile = load_profile(REPO / "profiles/chain.reach-local.json")
    if calibrated:
        profile = profile.model_copy(update={"calibration": Calibration(method="test", call_overhead_ms=1.5,
                                                                        gateway_overhead_ms=2.5)})
    app, state = load_app(REPO / "workloads/chain.json"), simulated_state(load_inventory(None))
    grouped = model_for(app, profile, state, rtt="configured")
    assert grouped.topo.rtt is None  # nothing dense until asked
    assert len(grouped.topo.rtt_self) < len(grouped.topo.nodes)
    same(grouped, model_for(app, profile, dense(state), rtt="configured"), placements(grouped, 6))


def test_a_generated_continuum_grouped_or_dense_gives_the_same_predictions():
    inv_doc = continuum(60, 3)
    inv = check_semantics(parse_model(Inventory, inv_doc, "generated"), "generated")
    app_doc = generated_app(15, 3, pods=40)
    app = parse_app(app_doc, "generated")
    profile = parse_model(Profile, modelled_profile(app_doc, inv_doc), "generated")
    state = simulated_state(inv)
    grouped = model_for(app, profile, state)
    assert grouped.topo.rtt_table.shape[0] < 20 < len(grouped.topo.nodes)
    same(grouped, model_for(app, profile, dense(state)), placements(grouped, 4, seed=1))
