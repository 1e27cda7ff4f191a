"""Placement metrics on a hand-made run: every value below is computed by hand in the comments."""

from __future__ import annotations

import pytest

from harness.results import placement_metrics as pm

NODES = {"e1": pm.NodeInfo("edge", 4, 4096, cost=2, site="s1"), "e2": pm.NodeInfo("edge", 2, 2048, cost=2, site="s2"),
         "c1": pm.NodeInfo("cloud", 8, 8192, cost=1, site="s2"), "u1": pm.NodeInfo("client", 4, 4096)}
REQ = {"a": (1.0, 1024.0), "b": (0.5, 512.0)}
P1 = {"a": ["e1", "c1"], "b": ["e1"]}
P2 = {"a": ["e1", "e2"], "b": ["c1"]}
PLACEMENTS = [{"t": 100.0, "placement": P1}, {"t": 110.0, "placement": P2}]  # P1 holds 10 s, P2 20 s of [100, 130]
EVENTS = [{"t": 99.0, "kind": "deploy", "detail": {"placement": P1}},
          {"t": 110.0, "kind": "move", "detail": {"source": "c1", "target": "e2"}},
          {"t": 110.0, "kind": "move", "detail": {"source": "e1", "target": "c1"}},
          {"t": 120.0, "kind": "scale", "detail": {"service": "b", "to": 2, "current": 1}},
          {"t": 120.0, "kind": "pending", "detail": {"service": "b", "reason": "scale-up"}}]


def test_one_placement():
    s = pm.snapshot(P1, NODES, REQ)
    assert s["cost_per_hour"] == 3  # e1 (2) and c1 (1) host pods
    assert s["replica_cost"] == pytest.approx(5 / 3)  # replicas on e1, c1, e1
    assert s["edge_ratio_by_service"] == {"a": 0.5, "b": 1.0} and s["edge_ratio"] == 0.75 and s["edge_ratio_std"] == 0.25
    # replicas per node [e1 2, e2 0, c1 1]: sum |xi - xj| = 8, n = 3, mean 1 -> 8 / 18
    assert s["gini_nodes"] == pytest.approx(8 / 18)
    # sites s1: 2, s2: 1 -> 2 / (2 * 4 * 1.5)
    assert s["gini_sites"] == pytest.approx(2 / 12)
    # e1 uses 1.5 of 4 cores and 1536 of 4096 MiB: 1 - .375 * .375 = .859375; e2 empty: 1 -> mean .9296875
    assert s["edge_fragmentation"] == pytest.approx(0.9296875)


def test_a_run_is_time_weighted_over_its_window():
    m = pm.run_metrics(PLACEMENTS, EVENTS, NODES, REQ, t_start=100.0, t_end=130.0)
    assert m["cost"] == pytest.approx((3 * 10 + 5 * 20) / 3600, abs=1e-6)  # P2 uses e1, e2, c1: 5 per hour
    assert m["cost_per_hour"] == pytest.approx(130 / 30, abs=1e-4)
    # a: .5 for 10 s, 1 for 20 s -> 25/30; b: 1 for 10 s, 0 for 20 s -> 10/30
    assert m["edge_ratio_by_service"] == {"a": pytest.approx(0.8333, abs=1e-4), "b": pytest.approx(0.3333, abs=1e-4)}
    assert m["edge_ratio"] == pytest.approx(0.5833, abs=1e-4) and m["edge_ratio_std"] == pytest.approx(0.25, abs=1e-4)
    assert m["gini_nodes"] == pytest.approx((8 / 18 * 10 + 0 * 20) / 30, abs=1e-4)  # P2: one replica per node
    assert m["gini_sites"] == pytest.approx(1 / 6, abs=1e-4)  # P2: s1 1, s2 2 -> also 1/6
    # P2: e1 1 - .25 * .25 = .9375, e2 1 - .5 * .5 = .75 -> .84375; (.9296875 * 10 + .84375 * 20) / 30
    assert m["edge_fragmentation"] == pytest.approx(0.8724, abs=1e-4)
    assert m["migrations"] == {"cloud->edge": 1, "edge->cloud": 1}
    assert m["rejected"] == 1 and m["rejection_rate"] == 0.25  # 3 deployed + 1 scale-up asked, 1 pending


def test_gini_of_equal_and_concentrated_loads():
    assert pm.gini([3, 3, 3]) == 0
    assert pm.gini([0, 0, 6]) == pytest.approx(2 / 3)  # (n - 1) / n for everything on one of n
    assert pm.gini([]) == 0


def test_a_placement_before_the_window_counts_from_its_start():
    spans = pm.held([{"t": 50.0, "placement": P1}, {"t": 120.0, "placement": P2}], 100.0, 130.0)
    assert [dt for _, dt in spans] == [20.0, 10.0]
