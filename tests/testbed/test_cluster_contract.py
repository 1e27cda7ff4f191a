"""The Cluster contract: what everything above the testbed relies on, run against every backend.

- ``local``: the real local testbed (namespaces, cgroups, real cell processes; root, slow);
- ``kube-fake``: the Kubernetes backend (official client, real HTTP) against the FAKE API server
  of tests/kube/fake_apiserver.py, since no Kubernetes API server can run on this machine.
"""

from __future__ import annotations

import time

import pytest

from harness.errors import TestbedError as BackendError
from harness.spec.app import load_app
from harness.testbed.pods import deploy, move_pod, undeploy
from tests.conftest import REPO
from tests.kube.fake_apiserver import fake_kube_cluster


@pytest.fixture
def kube_fake(tmp_path):
    with fake_kube_cluster(tmp_path / ".harness") as cluster:
        yield cluster


@pytest.fixture(params=["kube-fake", pytest.param("local", marks=[pytest.mark.root, pytest.mark.slow])])
def cluster(request):
    c = request.getfixturevalue("kube_fake" if request.param == "kube-fake" else "local_testbed")
    c = getattr(c, "cluster", c)
    yield c
    for n in c.nodes:
        if not c.node_up(n.name):
            c.recover_node(n.name)
    undeploy(c)


def by_tier(cluster, tier: str) -> list[str]:
    return [n.name for n in cluster.nodes if n.tier == tier]


def placement_of(cluster) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for p in cluster.pods():
        out.setdefault(p.service, []).append(p.node)
    return {s: sorted(v) for s, v in out.items()}


def wait_until(pred, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.05)
    return pred()


@pytest.fixture
def chain(cluster):
    app = load_app(REPO / "workloads/chain.json")
    cloud, edge = by_tier(cluster, "cloud"), by_tier(cluster, "edge")
    placement = {"front-end": [edge[0]], "ml": [cloud[0]], "back-end": [edge[1], cloud[1]], "db": [cloud[1]]}
    pods = deploy(cluster, app, placement)
    return app, placement, pods


def test_nodes_carry_type_tier_and_capacity_and_are_up(cluster):
    tiers = {n.tier for n in cluster.nodes}
    assert tiers == {"cloud", "edge", "client"}
    for n in cluster.nodes:
        assert n.cpus > 0 and n.memory_gb > 0 and n.type
        assert cluster.node_up(n.name)
    with pytest.raises(KeyError):
        cluster.node("no-such-node")


def test_deploy_places_every_replica_where_asked_and_publishes(cluster, chain):
    app, placement, deployed = chain
    assert {p.name for p in deployed} == {p.name for p in cluster.pods()}
    for pod in deployed:
        host, port = pod.endpoint.rsplit(":", 1)
        assert host and int(port) > 0  # callers can reach it (Kubernetes: the pod IP, once running)
    assert placement_of(cluster) == {s: sorted(v) for s, v in placement.items()}
    assert cluster.app().services.keys() == app.services.keys()
    for service, nodes in placement.items():
        assert len(cluster.endpoints(service)) == len(nodes)
    assert all(cluster.pod_alive(p) for p in cluster.pods())


def test_move_pod_is_make_before_break(cluster, chain):
    app, _, _ = chain
    ml = next(p for p in cluster.pods() if p.service == "ml")
    target = by_tier(cluster, "edge")[1]
    new = move_pod(cluster, ml, target)
    assert new.node == target and new.name != ml.name and new.address
    assert [p.node for p in cluster.pods() if p.service == "ml"] == [target]
    assert ml.name not in {p.name for p in cluster.pods()}
    assert wait_until(lambda: not cluster.pod_alive(ml))
    assert len(cluster.pods()) == 5


def test_a_pod_on_its_way_out_is_no_replica_but_still_holds_its_room(cluster, chain):
    """Retired, and (Kubernetes) terminating after its stop, a pod is not listed among the pods
    but among those leaving, until it is gone."""
    ml = next(p for p in cluster.pods() if p.service == "ml")
    assert cluster.leaving() == []
    cluster.retire_pod(ml)
    assert ml.name not in {p.name for p in cluster.pods()}
    assert [(p.name, p.node) for p in cluster.leaving()] == [(ml.name, ml.node)]
    cluster.stop_pod(ml, drain_seconds=1)
    assert ml.name not in {p.name for p in cluster.pods()}
    assert wait_until(lambda: cluster.leaving() == [])


def test_a_killed_pod_is_dead_until_replaced(cluster, chain):
    db = next(p for p in cluster.pods() if p.service == "db")
    cluster.kill_pod(db)
    assert wait_until(lambda: not cluster.pod_alive(db), 5)
    assert db.name in {p.name for p in cluster.pods()}  # still listed: self-healing finds it
    cluster.stop_pod(db, drain_seconds=0)
    cluster.publish()
    assert db.name not in {p.name for p in cluster.pods()}
    again = cluster.start_pod("db", db.node)
    cluster.wait_ready(again, 30)
    cluster.publish()
    assert [p.node for p in cluster.pods() if p.service == "db"] == [db.node]
    assert len(cluster.pods()) == 5


def test_fail_node_loses_its_pods_and_recovery_brings_it_back_empty(cluster, chain):
    edge = by_tier(cluster, "edge")
    lost = cluster.fail_node(edge[1])
    assert [p.service for p in lost] == ["back-end"]
    assert not cluster.node_up(edge[1])
    assert all(p.node != edge[1] for p in cluster.pods())
    assert len(cluster.endpoints("back-end")) == 1
    with pytest.raises(BackendError, match="down"):
        cluster.start_pod("back-end", edge[1])
    # self-healing: the lost replica elsewhere
    healed = cluster.start_pod("back-end", edge[0])
    cluster.wait_ready(healed, 30)
    cluster.publish()
    assert len(cluster.endpoints("back-end")) == 2
    cluster.recover_node(edge[1])
    assert cluster.node_up(edge[1])
    assert all(p.node != edge[1] for p in cluster.pods())  # back empty
    back = cluster.start_pod("db", edge[1])
    cluster.wait_ready(back, 30)


def test_a_pod_whose_node_fails_while_it_starts_is_not_waited_for(cluster):
    # a move planned just before a node failure started its pod there; waiting out the timeout
    # held the lock self-healing needs, and the app stayed down for 30 s
    cluster.set_app(load_app(REPO / "workloads/chain.json"))
    node = by_tier(cluster, "edge")[-1]
    pod = cluster.start_pod("back-end", node)
    cluster.fail_node(node)
    t = time.monotonic()
    with pytest.raises(BackendError):
        cluster.wait_ready(pod, 20)
    assert time.monotonic() - t < 5
    cluster.stop_pod(pod, drain_seconds=0)
    cluster.recover_node(node)


def test_undeploy_stops_every_pod(cluster, chain):
    pods = cluster.pods()
    assert undeploy(cluster) == len(pods) == 5
    assert cluster.pods() == []
    assert wait_until(lambda: not any(cluster.pod_alive(p) for p in pods))


def test_undeploy_also_stops_a_pod_left_retired_and_running(cluster, chain):
    """A run or move stopped between its withdraw and its stop leaves the old pod out of the
    endpoints but running: undeploy stops it too."""
    pods = cluster.pods()
    ml = next(p for p in pods if p.service == "ml")
    cluster.retire_pod(ml)
    assert undeploy(cluster) == 5
    assert cluster.pods() == []
    assert wait_until(lambda: cluster.leaving() == [])
    assert wait_until(lambda: not any(cluster.pod_alive(p) for p in pods))


def test_a_pod_stopped_twice_takes_one_replica(cluster, chain):
    """A move's stop, then undeploy's: stopping a pod already on its way out changes nothing (on
    Kubernetes a second scale-down would have the ReplicaSet delete the service's other pod)."""
    gone, kept = [p for p in cluster.pods() if p.service == "back-end"]
    cluster.retire_pod(gone)
    cluster.stop_pod(gone, drain_seconds=1)
    cluster.stop_pod(gone, drain_seconds=1)
    assert wait_until(lambda: cluster.leaving() == [])
    assert [p.name for p in cluster.pods() if p.service == "back-end"] == [kept.name]
    assert cluster.pod_alive(kept)


def test_start_pod_needs_the_app(cluster):
    with pytest.raises(BackendError, match="no app"):
        cluster.start_pod("no-such-service", by_tier(cluster, "cloud")[0])


def test_state_and_commands_in_the_client_node(cluster):
    """What callers use beyond pods: the state the testbed was provisioned with, and a command run
    to completion in the client node (where the load generator and the CPU check run)."""
    import sys

    from harness.testbed.backends import BACKENDS

    assert cluster.backend in BACKENDS
    assert [n.name for n in cluster.state.nodes] == [n.name for n in cluster.nodes]
    (client,) = by_tier(cluster, "client")
    r = cluster.run_in_node(client, [sys.executable, "-c", "print(6 * 7)"], timeout=30)
    assert r.returncode == 0 and r.stdout.strip() == "42"


def test_a_pod_the_constraints_forbid_is_refused(cluster):
    """Binding honours μBench's node_affinity and pod_antiaffinity on every backend."""
    app = load_app(REPO / "workloads/chain.json")
    cloud, edge = by_tier(cluster, "cloud"), by_tier(cluster, "edge")
    services = dict(app.services)
    services["db"] = services["db"].model_copy(update={"node_affinity": [edge[0]], "pod_antiaffinity": True})
    app = app.model_copy(update={"services": services})
    deploy(cluster, app, {"front-end": [cloud[0]], "ml": [cloud[0]], "back-end": [cloud[0]], "db": [edge[0]]})
    with pytest.raises(BackendError, match="not in db's node_affinity"):
        cluster.start_pod("db", cloud[0])
    with pytest.raises(BackendError, match="pod_antiaffinity"):
        cluster.start_pod("db", edge[0])
    assert sorted(p.node for p in cluster.pods() if p.service == "db") == [edge[0]]
