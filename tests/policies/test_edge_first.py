"""KubeDSM's baselines on REACH's testbed (edge-a: 4 cores, edge-b: 2, cloud-a: 8): where each puts
pods while the edge has room, and after."""

from __future__ import annotations

import pytest

from harness.policies import build
from harness.policies.contract import ClusterView, PendingPod
from harness.rescheduler.evaluate import SimWorld, scenario
from harness.sim.ceenv import Dynamics, EnvConfig, default_model


@pytest.fixture(scope="module")
def view() -> ClusterView:
    dyn = Dynamics(default_model(None, None), EnvConfig())
    st = scenario(dyn, 4, 0)
    st.bg_cpu[:] = 0  # an empty cluster: capacities alone decide
    st.bg_mem[:] = 0
    return SimWorld(dyn, st).view()


def pods(n: int, cpu: float) -> list[PendingPod]:
    return [PendingPod("db", cpu, 64.0, f"db#{i}") for i in range(n)]


def test_first_fit_orders(view):
    # one-core pods: edge-a nodes hold 4 each, edge-b 2 each, cloud-a 8 each
    assert build("bef").place(view, pods(10, 1.0)) == ["edge-a-1"] * 4 + ["edge-a-2"] * 4 + ["edge-b-1"] * 2
    assert build("sef").place(view, pods(6, 1.0)) == ["edge-b-1"] * 2 + ["edge-b-2"] * 2 + ["edge-a-1"] * 2
    assert build("cf").place(view, pods(9, 1.0)) == ["cloud-a-1"] * 8 + ["cloud-a-2"]


def test_the_cloud_only_when_no_edge_node_fits(view):
    for name in ("bef", "sef", "k8s-edge"):
        placed = build(name).place(view, pods(14, 1.0))  # the edge holds 12 one-core pods
        assert placed[:12].count("cloud-a-1") + placed[:12].count("cloud-a-2") == 0, name
        assert set(placed[12:]) <= {"cloud-a-1", "cloud-a-2"}, name
    big = build("bef").place(view, pods(2, 6.0))  # no edge node has 6 cores
    assert big == ["cloud-a-1", "cloud-a-2"]


def test_k8s_edge_spreads_like_the_default_scheduler_among_edge_nodes(view):
    placed = build("k8s-edge").place(view, pods(4, 0.5))
    assert len(set(placed)) == 4 and all(n.startswith("edge") for n in placed)


def test_random_is_seeded_and_feasible(view):
    a = build("random", seed=3).place(view, pods(20, 1.0))
    assert a == build("random", seed=3).place(view, pods(20, 1.0))
    assert a != build("random", seed=4).place(view, pods(20, 1.0))
    assert None not in a and len(set(a)) > 2
    assert build("random").place(view, pods(1, 99.0)) == [None]  # nothing fits: pending
