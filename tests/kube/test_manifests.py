"""The manifests rendered for the shipped apps validate offline against Kubernetes' OpenAPI
schemas (kubernetes-validate, strict: unknown fields are errors), and say what the backend
relies on."""

from __future__ import annotations

import json

import kubernetes_validate
import pytest

from harness.spec.app import load_app
from harness.testbed.kube import manifests
from tests.conftest import REPO

K8S_VERSION = "1.31.0"  # K3s v1.31, the inventories' default
APPS = sorted(p.stem for p in (REPO / "workloads").glob("*.json"))


def validate_all(objs: list[dict]) -> None:
    for obj in objs:
        try:
            kubernetes_validate.validate(obj, K8S_VERSION, strict=True)
        except kubernetes_validate.ValidationError as exc:
            pytest.fail(f"{obj['kind']}/{obj['metadata']['name']}: {exc.message} at {list(exc.path)}")


@pytest.mark.parametrize("name", APPS)
def test_app_manifests_validate_and_carry_the_app(name):
    app = load_app(REPO / f"workloads/{name}.json")
    objs = manifests.app_objects(app, "harness", "harness/cell:0.1.0", gateway_node_port=30080)
    validate_all(objs)
    kinds = [o["kind"] for o in objs]
    assert kinds.count("Deployment") == len(app.services)
    assert kinds.count("Service") == len(app.services) + 1  # + the gateway's NodePort
    config = next(o for o in objs if o["kind"] == "ConfigMap")
    assert json.loads(config["data"]["app.json"])["services"].keys() == app.services.keys()
    assert json.loads(config["data"]["endpoints.json"])[app.gateway] == [f"{app.gateway}.harness.svc.cluster.local.:80"]
    for dep in (o for o in objs if o["kind"] == "Deployment"):
        spec = dep["spec"]["template"]["spec"]
        assert dep["spec"]["replicas"] == 0
        assert spec["schedulerName"] == "harness-scheduler"
        assert {t["key"]: t["tolerationSeconds"] for t in spec["tolerations"]} == {
            "node.kubernetes.io/not-ready": 2, "node.kubernetes.io/unreachable": 2}
        labels = dep["spec"]["template"]["metadata"]["labels"]
        assert labels["app"] == dep["metadata"]["name"] and labels["version"] == "v1"  # μBench's labels
        requests = spec["containers"][0]["resources"]["requests"]
        assert requests["cpu"].endswith("m") and requests["memory"].endswith("Mi")
    gateway = next(o for o in objs if o["metadata"]["name"] == f"{app.gateway}-nodeport")
    assert gateway["spec"]["externalTrafficPolicy"] == "Local"


def test_hpa_prometheus_and_rescheduler_manifests_validate():
    app = load_app(REPO / "workloads/chain.json")
    validate_all(manifests.hpa_objects(app, "harness", 50, 1, 5))
    validate_all(manifests.prometheus_objects("harness", 30090))
    validate_all(manifests.rescheduler_objects("harness", "harness/cell:0.1.0", "reach", "reach-chain.pt", 5))


def test_rescheduler_rbac_is_least_privilege():
    objs = manifests.rescheduler_objects("harness", "harness/cell:0.1.0", "reach", "reach-chain.pt", 5)
    cluster_roles = [o for o in objs if o["kind"] == "ClusterRole"]
    assert len(cluster_roles) == 1
    assert cluster_roles[0]["rules"] == [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]}]
    role = next(o for o in objs if o["kind"] == "Role")
    assert role["metadata"]["namespace"] == "harness"
    verbs = {(g, r): set(rule["verbs"]) for rule in role["rules"] for g in rule["apiGroups"] for r in rule["resources"]}
    assert verbs[("", "pods/binding")] == {"create"}
    assert "delete" in verbs[("", "pods")] and "create" not in verbs[("", "pods")]
    assert verbs[("apps", "deployments")] >= {"patch"} and "delete" not in verbs[("apps", "deployments")]
    assert all("*" not in v for v in verbs.values())
    assert all(r != "secrets" for _, r in verbs)


def test_a_bad_manifests_folder_is_one_clear_error(tmp_path, monkeypatch):
    from harness.errors import TestbedError

    monkeypatch.setenv(manifests.MANIFESTS_ENV, str(tmp_path))
    with pytest.raises(TestbedError, match="manifest templates not found"):
        manifests.manifests_dir()
