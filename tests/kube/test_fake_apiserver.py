"""The fake API server behaves as Kubernetes does where the backend depends on it; otherwise
the contract tests against it would prove nothing."""

from __future__ import annotations

import time

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.kube.fake_apiserver import DELETION_COST, FakeApiServer, FakeCluster, matches, merge_patch

NODES = [{"name": "n1", "type": "cloud-a", "tier": "cloud", "address": "10.0.0.1", "cpus": 4, "memory_gb": 8},
         {"name": "n2", "type": "edge-a", "tier": "edge", "address": "10.0.0.2", "cpus": 2, "memory_gb": 4}]
DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "ns"},
    "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}},
             "template": {"metadata": {"labels": {"app": "web", "harness.io/serving": "false"}},
                          "spec": {"schedulerName": "harness-scheduler", "terminationGracePeriodSeconds": 5,
                                   "containers": [{"name": "c", "image": "i"}]}}}}


@pytest.fixture
def api():
    with FakeApiServer(NODES) as server:
        api = client.ApiClient(client.Configuration(host=server.url))
        core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
        core.create_namespace({"metadata": {"name": "ns"}})
        apps.create_namespaced_deployment("ns", DEPLOYMENT)
        yield core, apps, server
        api.close()


def pods(core) -> list:
    return core.list_namespaced_pod("ns", label_selector="app=web").items


def wait_for(pred, timeout=5.0):
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def bind(core, name, node):
    body = client.V1Binding(metadata=client.V1ObjectMeta(name=name),
                            target=client.V1ObjectReference(api_version="v1", kind="Node", name=node))
    return core.create_namespaced_pod_binding(name, "ns", body, _preload_content=False)


def test_scaling_up_makes_unbound_pods_that_run_once_bound(api):
    core, apps, _ = api
    apps.patch_namespaced_deployment_scale("web", "ns", {"spec": {"replicas": 2}})
    wait_for(lambda: len(pods(core)) == 2)
    assert all(p.spec.node_name is None and p.status.phase == "Pending" for p in pods(core))
    time.sleep(0.4)
    assert all(p.status.phase == "Pending" for p in pods(core))  # nobody schedules harness-scheduler pods
    bind(core, pods(core)[0].metadata.name, "n2")
    wait_for(lambda: any(p.status.phase == "Running" and p.status.pod_ip for p in pods(core)))
    running = next(p for p in pods(core) if p.status.phase == "Running")
    assert running.spec.node_name == "n2"
    assert any(c.type == "Ready" and c.status == "True" for c in running.status.conditions)


def test_binding_answers_with_a_status_the_client_cannot_read_as_a_binding(api):
    """kubernetes-client/python#825, reproduced: without _preload_content=False the call fails
    after the binding was made; the backend must take the raw response."""
    core, apps, server = api
    apps.patch_namespaced_deployment_scale("web", "ns", {"spec": {"replicas": 1}})
    wait_for(lambda: len(pods(core)) == 1)
    name = pods(core)[0].metadata.name
    body = client.V1Binding(metadata=client.V1ObjectMeta(name=name),
                            target=client.V1ObjectReference(api_version="v1", kind="Node", name="n1"))
    with pytest.raises(ValueError, match="target"):
        core.create_namespaced_pod_binding(name, "ns", body)
    assert core.read_namespaced_pod(name, "ns").spec.node_name == "n1"
    with pytest.raises(ApiException) as exc:
        bind(core, name, "n2")
    assert exc.value.status == 409


def test_scale_down_deletes_in_kubernetes_order(api):
    core, apps, _ = api
    apps.patch_namespaced_deployment_scale("web", "ns", {"spec": {"replicas": 4}})
    wait_for(lambda: len(pods(core)) == 4)
    names = [p.metadata.name for p in pods(core)]
    for n in names[:3]:
        bind(core, n, "n1")
    wait_for(lambda: sum(p.status.phase == "Running" for p in pods(core)) == 3)
    marked = names[1]
    core.patch_namespaced_pod(marked, "ns", {"metadata": {"annotations": {DELETION_COST: "-100"}}})
    # first the unbound pod goes, then the one with the lowest deletion cost
    apps.patch_namespaced_deployment_scale("web", "ns", {"spec": {"replicas": 3}})
    wait_for(lambda: names[3] not in {p.metadata.name for p in pods(core)})
    apps.patch_namespaced_deployment_scale("web", "ns", {"spec": {"replicas": 2}})
    wait_for(lambda: any(p.metadata.name == marked and p.metadata.deletion_timestamp for p in pods(core))
             or marked not in {p.metadata.name for p in pods(core)})
    left = {p.metadata.name for p in pods(core) if p.metadata.deletion_timestamp is None}
    assert left == {names[0], names[2]}


def test_graceful_delete_terminates_first_and_grace_zero_removes_at_once():
    c = FakeCluster(NODES, shutdown_delay=0.3)
    c.create("namespaces", "", {"metadata": {"name": "ns"}})
    c.create("deployments", "ns", {**DEPLOYMENT, "spec": {**DEPLOYMENT["spec"], "replicas": 2}})
    c.reconcile()
    a, b = (p["metadata"]["name"] for p in c.list("pods", "ns", None))
    c.delete("pods", "ns", a)
    assert c.get("pods", "ns", a)["metadata"]["deletionTimestamp"]
    c.delete("pods", "ns", b, grace=0)
    assert [p["metadata"]["name"] for p in c.list("pods", "ns", None)] == [a]
    time.sleep(0.35)
    c.reconcile()
    assert a not in {p["metadata"]["name"] for p in c.list("pods", "ns", None)}


def test_stopped_node_is_not_ready_and_its_pods_stay_until_deleted(api):
    core, apps, server = api
    apps.patch_namespaced_deployment_scale("web", "ns", {"spec": {"replicas": 1}})
    wait_for(lambda: len(pods(core)) == 1)
    bind(core, pods(core)[0].metadata.name, "n2")
    server.cluster.set_node_ready("n2", False)
    ready = {n.metadata.name: n.status.conditions[0].status for n in core.list_node().items}
    assert ready == {"n1": "True", "n2": "False"}
    time.sleep(0.4)
    p = pods(core)[0]
    assert p.status.phase == "Pending" and p.spec.node_name == "n2"  # no kubelet to start it


def test_selectors_and_merge_patch():
    assert matches({"a": "1", "b": "2"}, "a=1,b") and matches({"a": "1"}, "a==1") and matches({"a": "1"}, "a!=2")
    assert not matches({"a": "1"}, "a=2") and not matches({"a": "1"}, "b") and not matches({"a": "1"}, "a!=1")
    assert merge_patch({"m": {"l": {"x": "1", "y": "2"}}}, {"m": {"l": {"y": None, "z": "3"}}}) == {"m": {"l": {"x": "1", "z": "3"}}}
