"""The trace replay against the load-free model (a request alone), processor sharing by hand, and
M/G/1-PS's mean under Poisson arrivals."""

import numpy as np
import pytest

from harness.sim.latency import LatencyModel
from harness.results.stats import paired_error
from harness.sim.trace_replay import host_slowdown, replay_ms
from tests.sim.test_latency import EXEC, TOPO, app, g

CHAIN = app({"a": [g("b")], "b": [g("c")], "c": [g("d")]})
FAN_OUT = app({"a": [g("b"), g("c", "d")]})  # b in parallel with (c then d)


def one_each(*nodes):
    X = np.zeros((4, 4))
    for s, n in enumerate(nodes):
        X[s, n] = 1
    return X


@pytest.mark.parametrize("graph,X", [(CHAIN, one_each(2, 0, 0, 3)), (CHAIN, one_each(0, 1, 2, 3)),
                                     (FAN_OUT, one_each(2, 0, 1, 3)), (FAN_OUT, one_each(0, 2, 1, 1))])
def test_a_request_alone_takes_the_load_free_models_latency(graph, X):
    m = LatencyModel(graph, EXEC, TOPO)
    got = replay_ms(m, X, [0.0, 100.0, 200.0])
    assert got == pytest.approx([float(m.latency(X)[0])] * 3)


def test_requests_at_once_share_the_node():
    # a alone on c1 (10 ms of work); two requests at once each get half the CPU: both finish at 20 ms.
    # A third 15 ms later finds both with 2.5 ms left; three share, so those two end at 15 + 7.5 = 22.5 ms
    single = app({})
    m = LatencyModel(single, EXEC, TOPO)
    X = one_each(0, 1, 1, 1)  # only a is called
    user = TOPO.user_rtt[0]
    got = replay_ms(m, X, [0.0, 0.0]) - user
    assert got == pytest.approx([20.0, 20.0])
    got = replay_ms(m, X, [0.0, 0.0, 0.015]) - user
    # the third did 2.5 ms of work by 22.5 ms, then 7.5 ms alone: it ends at 30 ms, 15 ms after it came
    assert got == pytest.approx([22.5, 22.5, 15.0])
    # capacity 0.5: each job leaves 10 ms of other work behind on its node, which holds up no request:
    # one alone still takes 10 ms and two at once 20; a third at 20 ms shares the node with the two
    # left-behind 10 ms and ends with them, at 50 ms (capacity 1: alone, 10 ms)
    assert replay_ms(m, X, [0.0], capacity=0.5) - user == pytest.approx([10.0])
    assert replay_ms(m, X, [0.0, 0.0, 0.020], capacity=0.5) - user == pytest.approx([20.0, 20.0, 30.0])
    assert replay_ms(m, X, [0.0, 0.0, 0.020]) - user == pytest.approx([20.0, 20.0, 10.0])


def test_poisson_arrivals_give_the_ps_mean():
    # M/G/1-PS: the mean sojourn is E / (1 − ρ) whatever the service-time distribution (here fixed)
    m = LatencyModel(app({}), EXEC, TOPO)
    X = one_each(0, 1, 1, 1)
    rng = np.random.default_rng(3)
    rate = 50.0  # a takes 10 ms on c1: ρ = 0.5
    arrivals = np.cumsum(rng.exponential(1 / rate, 20000))
    got = replay_ms(m, X, arrivals) - TOPO.user_rtt[0]
    assert got.mean() == pytest.approx(10 / (1 - 0.5), rel=0.05)
    assert got.min() == pytest.approx(10.0)  # nobody is faster than alone


def test_capacity_loads_the_node_as_the_queueing_formula_says():
    # sim.queueing's node-ps: W = E / (1 − λE/c); at λE = 0.4 and c = 0.8 the node is busy half the time
    m = LatencyModel(app({}), EXEC, TOPO)
    X = one_each(0, 1, 1, 1)
    arrivals = np.cumsum(np.random.default_rng(3).exponential(1 / 40.0, 20000))
    got = replay_ms(m, X, arrivals, capacity=0.8) - TOPO.user_rtt[0]
    assert got.mean() == pytest.approx(10 / (1 - 0.5), rel=0.05)
    assert (replay_ms(m, X, arrivals) - TOPO.user_rtt[0]).mean() == pytest.approx(10 / (1 - 0.4), rel=0.05)


def test_a_slower_host_stretches_the_work_not_the_network():
    m = LatencyModel(CHAIN, EXEC, TOPO)
    X = one_each(2, 0, 0, 3)
    work = sum(EXEC[s][t] for s, t in zip("abcd", ("edge", "cloud", "cloud", "edge")))
    alone = float(m.latency(X)[0])
    twice = host_slowdown([1000.0], [10.0], reference_ms=5.0)  # one sample: twice as slow throughout
    assert replay_ms(m, X, [1000.0], slowdown=twice) == pytest.approx([alone + work])
    # slow from 2000 s on only (samples at 1000 and 3000 s: the change halfway between them)
    later = host_slowdown([1000.0, 3000.0], [5.0, 10.0], reference_ms=5.0)
    assert replay_ms(m, X, [1000.0, 2500.0], slowdown=later) == pytest.approx([alone, alone + work])


def test_the_paired_interval_drops_what_both_series_share():
    rng = np.random.default_rng(0)
    t = np.arange(600.0)
    bursts = np.repeat(rng.exponential(500, 20), 30)  # 30 s stretches that differ by far
    measured, predicted = bursts + rng.normal(0, 5, 600), bursts + 10
    m, p, half = paired_error(t, measured, predicted)
    assert m - p == pytest.approx(-10, abs=1.5)
    assert half < 3  # the bursts are gone from the difference; each series' own interval is ±100s
