"""The Cluster contract: what everything above the testbed relies on, run against every backend.

- ``local``: the real local testbed (namespaces, cgroups, real cell processes; root, slow);
- ``kube-fake``: the Kubernetes backend (official client, real HTTP) against the FAKE API server
  of tests/kube/fake_apiserver.py, since no Kubernetes API server can run on this machine.
"""

from __future__ import annotations

import time
import urllib.request

import pytest
from kubernetes import client

from harness.errors import TestbedError as BackendError
from harness.spec.app import load_app
from harness.spec.inventory import load_inventory
from harness.spec.testbed_state import TestbedState as State
from harness.testbed.kube.backend import KubeCluster
from harness.testbed.kube.provision import node_states
from harness.testbed.pods import deploy, move_pod, undeploy
from tests.conftest import REPO
from tests.kube.fake_apiserver import FakeApiServer


class FakeNodePower:
    """Stands in for node-power.yml: flips the fake node's Ready condition, as k3s-killall.sh
    and a restart of K3s do on a real node (after their delays)."""

    def __init__(self, url: str):
        self.url, self.calls = url, []

    def _post(self, node: str, verb: str) -> None:
        self.calls.append((verb, node))
        urllib.request.urlopen(urllib.request.Request(f"{self.url}/fake/nodes/{node}/{verb}", method="POST"), timeout=5).read()

    def stop(self, node: str) -> None:
        self._post(node, "stop")

    def start(self, node: str) -> None:
        self._post(node, "start")


@pytest.fixture
def kube_fake(tmp_path):
    inv = load_inventory()
    addresses = {n.name: {"private": f"192.168.50.{i + 10}", "public": f"203.0.113.{i + 10}"} for i, n in enumerate(inv.nodes)}
    nodes = node_states(inv, addresses)
    with FakeApiServer([n.model_dump() for n in nodes]) as server:
        state = State(backend="k3s", name="fake", status="ready", inventory_checksum="x",
                             inventory=inv.model_dump(mode="json"), created="now", nodes=nodes,
                             rtt_configured_ms=inv.rtt_matrix(),
                             backend_data={"namespace": "harness", "image": "harness/cell:test", "gateway_node_port": 30080,
                                           "drain_seconds": 1, "addresses": addresses, "failed_nodes": []})
        api = client.ApiClient(client.Configuration(host=server.url))
        cluster = KubeCluster(state, tmp_path / ".harness", api, FakeNodePower(server.url), node_ready_timeout=10)
        cluster.fake = server  # for the tests that look behind the API
        from harness.testbed.kube.apply import apply_all
        from harness.testbed.kube.manifests import render

        apply_all(api, render("namespace.yaml.j2", namespace="harness"))
        yield cluster
        api.close()


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
    deploy(cluster, app, placement)
    return app, placement


def test_nodes_carry_type_tier_and_capacity_and_are_up(cluster):
    tiers = {n.tier for n in cluster.nodes}
    assert tiers == {"cloud", "edge", "client"}
    for n in cluster.nodes:
        assert n.cpus > 0 and n.memory_gb > 0 and n.type
        assert cluster.node_up(n.name)
    with pytest.raises(KeyError):
        cluster.node("no-such-node")


def test_deploy_places_every_replica_where_asked_and_publishes(cluster, chain):
    app, placement = chain
    assert placement_of(cluster) == {s: sorted(v) for s, v in placement.items()}
    assert cluster.app().services.keys() == app.services.keys()
    for service, nodes in placement.items():
        assert len(cluster.endpoints(service)) == len(nodes)
    assert all(cluster.pod_alive(p) for p in cluster.pods())


def test_move_pod_is_make_before_break(cluster, chain):
    app, _ = chain
    ml = next(p for p in cluster.pods() if p.service == "ml")
    target = by_tier(cluster, "edge")[1]
    new = move_pod(cluster, ml, target)
    assert new.node == target and new.name != ml.name
    assert [p.node for p in cluster.pods() if p.service == "ml"] == [target]
    assert ml.name not in {p.name for p in cluster.pods()}
    assert wait_until(lambda: not cluster.pod_alive(ml))
    assert len(cluster.pods()) == 5


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


def test_undeploy_stops_every_pod(cluster, chain):
    pods = cluster.pods()
    assert undeploy(cluster) == len(pods) == 5
    assert cluster.pods() == []
    assert wait_until(lambda: not any(cluster.pod_alive(p) for p in pods))


def test_start_pod_needs_the_app(cluster):
    with pytest.raises(BackendError, match="no app"):
        cluster.start_pod("no-such-service", by_tier(cluster, "cloud")[0])
