"""Create-or-update of the few object kinds the harness renders, through the official client.

``kubectl apply`` would need a three-way merge and a CLI on the path; the harness owns every
object it creates, so "create, and on 409 merge-patch the rendered fields" is enough. A
Deployment's replica count is left alone on update: the harness scales it pod by pod.
"""

from __future__ import annotations

import copy
from typing import Any

from kubernetes import client
from kubernetes.client.rest import ApiException


def _calls(api: client.ApiClient, kind: str, namespace: str | None):
    core, apps, rbac = client.CoreV1Api(api), client.AppsV1Api(api), client.RbacAuthorizationV1Api(api)
    autoscaling = client.AutoscalingV2Api(api)
    table = {
        "Namespace": (lambda b: core.create_namespace(b), lambda n, b: core.patch_namespace(n, b)),
        "ConfigMap": (lambda b: core.create_namespaced_config_map(namespace, b),
                      lambda n, b: core.patch_namespaced_config_map(n, namespace, b)),
        "Service": (lambda b: core.create_namespaced_service(namespace, b),
                    lambda n, b: core.patch_namespaced_service(n, namespace, b)),
        "ServiceAccount": (lambda b: core.create_namespaced_service_account(namespace, b),
                           lambda n, b: core.patch_namespaced_service_account(n, namespace, b)),
        "Deployment": (lambda b: apps.create_namespaced_deployment(namespace, b),
                       lambda n, b: apps.patch_namespaced_deployment(n, namespace, b)),
        "HorizontalPodAutoscaler": (
            lambda b: autoscaling.create_namespaced_horizontal_pod_autoscaler(namespace, b),
            lambda n, b: autoscaling.patch_namespaced_horizontal_pod_autoscaler(n, namespace, b)),
        "Role": (lambda b: rbac.create_namespaced_role(namespace, b),
                 lambda n, b: rbac.patch_namespaced_role(n, namespace, b)),
        "RoleBinding": (lambda b: rbac.create_namespaced_role_binding(namespace, b),
                        lambda n, b: rbac.patch_namespaced_role_binding(n, namespace, b)),
        "ClusterRole": (lambda b: rbac.create_cluster_role(b), lambda n, b: rbac.patch_cluster_role(n, b)),
        "ClusterRoleBinding": (lambda b: rbac.create_cluster_role_binding(b),
                               lambda n, b: rbac.patch_cluster_role_binding(n, b)),
    }
    if kind not in table:
        raise ValueError(f"the harness does not apply objects of kind {kind}")
    return table[kind]


def apply(api: client.ApiClient, obj: dict[str, Any]) -> str:
    """Create ``obj``, or update it if it exists; returns "created" or "updated"."""
    create, patch = _calls(api, obj["kind"], obj["metadata"].get("namespace"))
    try:
        create(obj)
        return "created"
    except ApiException as exc:
        if exc.status != 409:
            raise
    update = copy.deepcopy(obj)
    if obj["kind"] == "Deployment":
        update["spec"].pop("replicas", None)
    patch(obj["metadata"]["name"], update)
    return "updated"


def apply_all(api: client.ApiClient, objs: list[dict[str, Any]]) -> dict[str, int]:
    counts = {"created": 0, "updated": 0}
    for obj in objs:
        counts[apply(api, obj)] += 1
    return counts
