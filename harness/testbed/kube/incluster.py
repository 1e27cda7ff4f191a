"""The Kubernetes backend seen from inside the cluster (the in-cluster rescheduler's Deployment,
manifests/rescheduler.yaml.j2): the pod's service account, and no node power."""

from __future__ import annotations

from pathlib import Path

from harness.spec.testbed_state import TestbedState
from harness.testbed.kube.backend import KubeCluster


class NoNodePower:
    """Inside the cluster nobody powers nodes off or on."""

    def stop(self, node: str) -> None:
        raise RuntimeError("the in-cluster rescheduler does not fail nodes")

    start = stop


def in_cluster(state: TestbedState, namespace: str, work_dir: Path) -> KubeCluster:
    """A KubeCluster through the pod's service account."""
    from kubernetes import client, config

    from harness.errors import TestbedError
    from harness.testbed.kube.connect import timed_client

    cfg = client.Configuration()
    config.load_incluster_config(client_configuration=cfg)
    state = state.model_copy(deep=True)
    state.backend_data.update({"namespace": namespace, "failed_nodes": []})
    return KubeCluster(state, work_dir, timed_client(cfg, TestbedError), NoNodePower())


