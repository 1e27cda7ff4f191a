"""The queueing model against closed forms: M/G/1-PS per node, Erlang C per (service, node)."""

import numpy as np
import pytest

from harness.sim.latency import LatencyModel
from harness.sim.queueing import QueueingModel, erlang_c_wait, visits
from tests.sim.test_latency import EXEC, TOPO, app, g

CHAIN = app({"a": [g("b")], "b": [g("c")], "c": [g("d")]})


def test_visits_follow_the_graph_and_its_weights():
    assert visits(LatencyModel(CHAIN, EXEC, TOPO)).tolist() == [1, 1, 1, 1]
    m = LatencyModel(app({"a": [g("b", p={"b": 0.5})], "b": [g("c", "d", seq=1)]}), EXEC, TOPO)
    assert visits(m).tolist() == [1, 0.5, 0.25, 0.25]


def test_no_load_is_the_load_free_model():
    m = LatencyModel(CHAIN, EXEC, TOPO)
    X = np.zeros((4, 4))
    X[0, 0] = X[1, 0] = X[2, 2] = X[3, 3] = 1
    for d in ("node-ps", "erlang-c"):
        assert QueueingModel(m, d).latency(X, 0.0) == pytest.approx(float(m.latency(X)[0]))


def test_node_processor_sharing_slows_every_pod_of_a_busy_node():
    # a (10 ms) and b (30 ms) share c1: 10 req/s keep it busy 40 % of the time, so each takes 1/0.6 as long;
    # c and d sit alone on e1 and e2 (10 and 4 ms at 10 req/s: 10 % and 4 % busy)
    m = LatencyModel(CHAIN, EXEC, TOPO)
    X = np.zeros((4, 4))
    X[0, 0] = X[1, 0] = X[2, 2] = X[3, 3] = 1
    q = QueueingModel(m, "node-ps")
    W = q.sojourn_ms(X, 10.0)
    assert W[0, 0] == pytest.approx(10 / 0.6) and W[1, 0] == pytest.approx(30 / 0.6)
    assert W[2, 2] == pytest.approx(10 / 0.9) and W[3, 3] == pytest.approx(4 / 0.96)
    load_free = float(m.latency(X)[0])
    assert q.latency(X, 10.0) == pytest.approx(load_free + (10 / 0.6 - 10) + (30 / 0.6 - 30) + (10 / 0.9 - 10)
                                               + (4 / 0.96 - 4))
    assert q.saturation_rate(X) == pytest.approx(25.0)  # c1 is busy 40 ms per request
    assert q.latency(X, 25.0) == np.inf


def test_erlang_c_is_mm1_with_one_server_and_counts_replicas():
    assert erlang_c_wait(1, 0.5) == pytest.approx(0.5)
    assert erlang_c_wait(2, 1.0) == pytest.approx(1 / 3)
    m = LatencyModel(CHAIN, EXEC, TOPO)
    X = np.zeros((4, 4))
    X[0, 0] = X[1, 0] = X[2, 2] = X[3, 3] = 1
    W = QueueingModel(m, "erlang-c").sojourn_ms(X, 10.0)
    assert W[1, 0] == pytest.approx(1000 / (1000 / 30 - 10))  # M/M/1: 1 / (μ − λ); a's pod does not slow b's
    X[1, 0] = 2  # two replicas of b on c1 (5 req/s each way, as one M/M/2 at 10 req/s)
    mu, lam = 1000 / 30, 10.0
    assert QueueingModel(m, "erlang-c").sojourn_ms(X, 10.0)[1, 0] == pytest.approx(
        (erlang_c_wait(2, lam / mu) / (2 * mu - lam) + 1 / mu) * 1000)


def test_at_rest_takes_the_waiting_out_of_times_measured_under_load():
    m = LatencyModel(CHAIN, EXEC, TOPO)
    X = np.zeros((4, 4))
    X[0, 0] = X[1, 0] = X[2, 2] = X[3, 3] = 1
    q = QueueingModel(m, "node-ps")
    measured = LatencyModel(CHAIN, EXEC, TOPO)
    measured.E = q.sojourn_ms(X, 10.0)  # what cells would report at 10 req/s
    rest = QueueingModel(measured, "node-ps").at_rest(X, 10.0)
    assert np.allclose(rest.E[X > 0], m.E[X > 0])
    assert np.allclose(measured.E[X > 0], q.sojourn_ms(X, 10.0)[X > 0])  # the measured model is left alone
    half = QueueingModel(m, "node-ps", capacity=0.5)
    measured.E = half.sojourn_ms(X, 5.0)
    assert np.allclose(QueueingModel(measured, "node-ps", capacity=0.5).at_rest(X, 5.0).E[X > 0], m.E[X > 0])


def test_capacity_below_one_loads_the_node_as_a_higher_rate_would():
    m = LatencyModel(CHAIN, EXEC, TOPO)
    X = np.zeros((4, 4))
    X[0, 0] = X[1, 0] = X[2, 2] = X[3, 3] = 1
    assert np.allclose(QueueingModel(m, "node-ps", capacity=0.8).sojourn_ms(X, 8.0),
                       QueueingModel(m, "node-ps").sojourn_ms(X, 10.0))
    assert QueueingModel(m, "node-ps", capacity=0.8).saturation_rate(X) == pytest.approx(20.0)
    with pytest.raises(ValueError):
        QueueingModel(m, "node-ps", capacity=1.5)


def test_parallel_callees_on_one_node_load_it_for_the_longest_not_the_sum():
    # a calls b and c at once (two groups), both on e1: b's measured 60 ms already holds c's share
    # of the CPU (PS: works 55 and 5 started together take 60 and 10), so e1 is busy 60 ms per
    # request, not 70; apart, on e1 and e2, each loads its own node
    par = LatencyModel(app({"a": [g("b"), g("c")]}), EXEC, TOPO)
    X = np.zeros((4, 4))
    X[0, 0] = X[3, 0] = 1
    X[1, 2] = X[2, 2] = 1
    q = QueueingModel(par, "node-ps")
    assert q.node_load(X, 10.0)[2] == pytest.approx(10 * 60 / 1000)
    assert q.saturation_rate(X) == pytest.approx(1000 / 60)
    X[2, 2], X[2, 3] = 0, 1
    assert q.node_load(X, 10.0)[2:].tolist() == pytest.approx([0.6, 0.1])
    seq = LatencyModel(app({"a": [g("b", "c")]}), EXEC, TOPO)  # one group: one after the other
    X[2, 3], X[2, 2] = 0, 1
    assert QueueingModel(seq, "node-ps").node_load(X, 10.0)[2] == pytest.approx(0.7)


def test_the_ps_stretch_past_the_knee_is_its_tangent_line():
    from harness.sim.latency_kernel import ps_stretch

    assert ps_stretch(0.5, 0.9) == pytest.approx(2.0) and ps_stretch(0.5, 1.0) == pytest.approx(2.0)
    assert ps_stretch(1.0, 1.0) == np.inf and ps_stretch(1.5, 1.0) == np.inf  # the prediction: saturated
    at = ps_stretch(0.9 - 1e-9, 0.9)
    assert ps_stretch(0.9, 0.9) == pytest.approx(at, rel=1e-6)  # continuous at the knee
    slope = (ps_stretch(1.2, 0.9) - ps_stretch(1.0, 0.9)) / 0.2
    assert slope == pytest.approx(100.0)  # d/dρ 1/(1-ρ) = 1/(1-ρ)² = 100 at 0.9
    assert ps_stretch(2.0, 0.9) > ps_stretch(1.5, 0.9) > ps_stretch(0.95, 0.9) > 10


@pytest.mark.parametrize("users", [1, 2, 5, 12])
def test_mean_value_analysis_equals_the_machine_repairman_on_one_node(users):
    """One processor-sharing node (work D per request) and a delay Z off it, N closed-loop users:
    the exact response time from the birth-death chain (p_k ∝ N!/(N-k)! (D/Z)^k, X = (1 - p_0)/D,
    R = N/X - Z) — insensitive to the distributions, so MVA must equal it."""
    from math import factorial

    from harness.sim.latency_kernel import mva_stretch

    D, Z = 80.0, 120.0
    weights = [factorial(users) / factorial(users - k) * (D / Z) ** k for k in range(users + 1)]
    p0 = weights[0] / sum(weights)
    R = users / ((1 - p0) / D) - Z
    out = np.empty(1)
    mva_stretch(np.array([D]), Z, users, out)
    assert out[0] * D == pytest.approx(R, rel=1e-9)


def test_closed_users_saturate_the_busiest_node():
    """Many users: throughput tends to 1 / (the busiest node's work), so the latency grows by
    about that work per added user; one user is the load-free model."""
    m = LatencyModel(app({"a": [g("b")], "b": [g("c")], "c": [g("d")]}), EXEC, TOPO)
    X = np.array([[1, 0, 0, 0], [0, 0, 1, 0], [1, 0, 0, 0], [0, 0, 0, 1]], float)
    q = QueueingModel(m, "node-ps")
    assert q.closed_latency(X, 1) == pytest.approx(m.latency(X)[0])
    busiest = q.node_load(X, 1.0).max() * 1000  # ms of work per request on the busiest node
    step = q.closed_latency(X, 41) - q.closed_latency(X, 40)
    assert step == pytest.approx(busiest, rel=0.02)


# ---------------------------------------------------------------- several closed loops at once
def test_closed_loops_on_nodes_apart_do_not_wait_for_each_other():
    from harness.sim.queueing import multiclass_stretch

    demand = np.array([[40.0, 0.0], [0.0, 30.0]])  # each class on its own node
    s = multiclass_stretch(demand, np.array([10.0, 20.0]), np.array([1.0, 1.0]))
    assert np.allclose(s[demand > 0], 1.0)
    shared = np.array([[40.0, 0.0], [30.0, 0.0]])  # both on node 0
    s = multiclass_stretch(shared, np.array([10.0, 20.0]), np.array([1.0, 1.0]))
    assert s[0, 0] > 1.2 and s[1, 0] > 1.2  # each waits behind the other, never behind itself


def test_one_class_of_users_near_the_exact_mean_value_analysis():
    """Schweitzer's approximation is known to be within some 10-15 % of the exact analysis."""
    from harness.sim.latency_kernel import mva_stretch
    from harness.sim.queueing import multiclass_stretch

    demand, think = np.array([30.0, 50.0, 10.0]), 40.0
    for users in (2, 4, 8):
        exact = np.empty(3)
        mva_stretch(demand, think, users, exact)
        approx = multiclass_stretch(demand[None], np.array([think]), np.array([float(users)]))[0]
        assert np.allclose(approx, exact, rtol=0.15)


def test_two_apps_users_wait_behind_each_other_only_where_they_share_nodes():
    from tests.sim.test_variability import _two_apps

    model, _ = _two_apps()
    q = QueueingModel(model)
    chain, agg = model.index["chain-front-end"], model.index["aggregator-parallel-front-end"]
    together = np.zeros((model.S, len(model.topo.nodes)))
    together[:, :2] = 1  # every service on both cloud nodes (cloud-first)
    both = {chain: 1, agg: 1}
    assert np.all(q.closed_execution(together, both, agg)[:, :2] > model.E[:, :2] * 1.05)
    apart = np.zeros_like(together)
    apart[:4, 0] = 1  # Chain on cloud-a-1, Aggregator-Parallel on cloud-a-2
    apart[4:, 1] = 1
    alone = model.request_ms(apart, model.terms(apart, E=q.closed_execution(apart, {agg: 1}, agg)), agg)
    beside = model.request_ms(apart, model.terms(apart, E=q.closed_execution(apart, both, agg)), agg)
    assert np.isclose(beside[0], alone[0]) and np.allclose(q.closed_execution(apart, both, agg)[4:, 1], model.E[4:, 1])
