"""The latency model against values computed by hand (REACH eqs. 2-9)."""

import numpy as np
import pytest

from harness.sim.latency import LatencyModel, Topology
from harness.spec.app import parse_app

# two cloud nodes c1 c2, two edge nodes e1 e2; user is 0.5 ms from edge, 50 ms from cloud
NODES = ("c1", "c2", "e1", "e2")
RTT = np.array([[0, 1, 50, 50], [1, 0, 50, 50], [50, 50, 0, 2], [50, 50, 2, 0]], float)
TOPO = Topology(nodes=NODES, node_types=("cloud", "cloud", "edge", "edge"), tiers=("cloud", "cloud", "edge", "edge"),
                cpus=np.array([8, 8, 4, 4.0]), memory_mib=np.array([16384, 16384, 8192, 8192.0]),
                rtt=RTT, user_rtt=np.array([50, 50, 0.5, 0.5]))
EXEC = {"a": {"cloud": 10, "edge": 20}, "b": {"cloud": 30, "edge": 60}, "c": {"cloud": 5, "edge": 10},
        "d": {"cloud": 2, "edge": 4}}


def job():
    return {"compute_pi": {"range_complexity": [1, 1]}}


def app(groups, gateway="a"):
    return parse_app({"name": "t", "gateway": gateway, "services": {
        s: {"internal_service": job(), "external_services": groups.get(s, [])} for s in "abcd"}}, "t")


def g(*s, seq=None, p=None):
    d = {"seq_len": seq or len(s), "services": list(s)}
    if p:
        d["probabilities"] = p
    return d


def test_chain():
    m = LatencyModel(app({"a": [g("b")], "b": [g("c")], "c": [g("d")]}), EXEC, TOPO)
    # a on e1, b on c1, c on c1, d on e2
    got = m.predict({"a": ["e1"], "b": ["c1"], "c": ["c1"], "d": ["e2"]})
    # T_S(d)=4; T_S(c)=5+50+4=59; T_S(b)=30+0+59=89; T_S(a)=20+50+89=159; D_msa=0.5+159
    assert got["services"]["c"]["T_S_ms"] == pytest.approx(59)
    assert got["latency_ms"] == pytest.approx(159.5)


def test_sequential_aggregator():
    m = LatencyModel(app({"a": [g("b", "c", "d")]}), EXEC, TOPO)
    got = m.predict({"a": ["c1"], "b": ["c2"], "c": ["e1"], "d": ["c1"]})
    # a: 10 + (1+30) + (50+10) + (0+2) = 103; user 50
    assert got["latency_ms"] == pytest.approx(153)


def test_parallel_aggregator_takes_the_slowest_group():
    m = LatencyModel(app({"a": [g("b"), g("c")], "c": [g("d")]}), EXEC, TOPO)
    got = m.predict({"a": ["e1"], "b": ["e2"], "c": ["c1"], "d": ["c2"]})
    # group b: 2+60=62; group c: 50 + (5 + 1 + 2) = 58 -> max 62; a: 20+62=82; +0.5
    assert got["latency_ms"] == pytest.approx(82.5)


def test_replicas_split_across_cloud_and_edge_average_everything():
    m = LatencyModel(app({"a": [g("b")]}), EXEC, TOPO)
    got = m.predict({"a": ["c1", "e1"], "b": ["c2", "e2"], "c": ["c1"], "d": ["c1"]})
    # T_E(a)=(10+20)/2=15; T_E(b)=(30+60)/2=45
    # D_S(a,b) = (D[c1,c2]+D[c1,e2]+D[e1,c2]+D[e1,e2])/4 = (1+50+50+2)/4 = 25.75
    # D_gateway = (50+0.5)/2 = 25.25; total = 25.25 + 15 + 25.75 + 45
    assert got["services"]["a"]["T_E_ms"] == pytest.approx(15)
    assert got["edges"][0]["D_S_ms"] == pytest.approx(25.75)
    assert got["latency_ms"] == pytest.approx(111.0)


def test_probability_and_random_subset_weigh_calls_by_expectation():
    m = LatencyModel(app({"a": [g("b", p={"b": 0.5})], "b": [g("c", "d", seq=1)]}), EXEC, TOPO)
    got = m.predict({"a": ["c1"], "b": ["c1"], "c": ["c1"], "d": ["e1"]})
    # b picks one of c, d: 30 + 0.5*(0+5) + 0.5*(50+4) = 59.5 ; a calls b half the time:
    # 10 + 0.5*(0+59.5) = 39.75 ; + user 50
    assert got["services"]["b"]["T_S_ms"] == pytest.approx(59.5)
    assert got["latency_ms"] == pytest.approx(89.75)


def test_batch_equals_one_by_one():
    m = LatencyModel(app({"a": [g("b"), g("c")], "c": [g("d")]}), EXEC, TOPO)
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(32, 4, 4))
    X[:, :, 0] += 1  # every service has a replica
    batch = m.latency(X)
    single = [m.latency(x)[0] for x in X]
    assert np.allclose(batch, single)


def test_no_placement_exceeds_the_model_s_upper_bound():
    import itertools

    from harness.sim.ceenv import default_model

    m = default_model(None, None)
    X = np.array([np.eye(len(m.topo.nodes))[list(c)] for c in itertools.product(range(len(m.topo.nodes)), repeat=m.S)])
    assert m.latency(X).max() <= m.upper_bound_ms() < 2 * m.latency(X).max()


def oracle(m: LatencyModel, X: np.ndarray, partial: bool = False) -> float:
    """REACH eqs. 2-9 for one placement, written out pod pair by pod pair, for comparison with the
    compiled model (which works on counts and computes X @ D once per caller)."""
    pods = {s: [n for n in range(X.shape[1]) for _ in range(int(X[i, n]))] for i, s in enumerate(m.services)}
    if partial and not any(pods.values()):
        return 0.0

    def service(s: str) -> float:  # partial: a service without pods has no execution or call delay of its own
        t_e = np.mean([m.E[m.index[s], n] for n in pods[s]]) if pods[s] else 0.0
        best = 0.0
        for grp in m.app.services[s].external_services:
            share = min(grp.seq_len, len(grp.services)) / len(grp.services)
            total = 0.0
            for c in grp.services:
                d = np.mean([m.D[a, b] for a in pods[s] for b in pods[c]]) if pods[s] and pods[c] else 0.0
                total += grp.probabilities.get(c, 1.0) * share * (d + service(c))
            best = max(best, total)
        return t_e + best
    entries = m.app.entry_services()
    gw = np.mean([np.mean([m.topo.user_rtt[n] for n in pods[e]]) if pods[e] else 0.0 for e in entries])
    return gw + np.mean([service(e) for e in entries])


@pytest.mark.parametrize("seed", range(6))
def test_compiled_model_equals_the_equations_pod_by_pod(seed):
    rng = np.random.default_rng(seed)
    groups = {"a": [g("b", "c", seq=int(rng.integers(1, 3)), p={"c": float(rng.uniform(0.2, 1))}), g("d")],
              "b": [g("d")], "c": [g("d", seq=1)]}
    m = LatencyModel(app(groups), EXEC, TOPO)
    X = rng.integers(0, 3, size=(20, 4, 4)).astype(float)
    X[:10, :, 1] += 1  # half complete; the rest may lack a service (partial only)
    for x, part in zip(X, m.partial_latency(X)):
        assert part == pytest.approx(oracle(m, x, partial=True))
    for x, full in zip(X[:10], m.latency(X[:10])):
        assert full == pytest.approx(oracle(m, x))
