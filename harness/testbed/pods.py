"""Pods, deployments and make-before-break moves, written once against the Cluster interface."""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Callable, Iterator

from harness.errors import TestbedError

if TYPE_CHECKING:
    from harness.spec.app import App
    from harness.spec.placement import Placement
    from harness.testbed.cluster import Cluster


@dataclass(frozen=True)
class Pod:
    name: str
    service: str
    node: str
    address: str
    port: int
    pid: int | None = None  # local backend only

    @property
    def endpoint(self) -> str:
        return f"{self.address}:{self.port}"

    def to_dict(self) -> dict:
        return asdict(self)


def pod_name(service: str, serial: int) -> str:
    return f"{service}-{serial}"


def deploy(cluster: "Cluster", app: "App", placement: "Placement",
           on_pod: Callable[[Pod], None] | None = None, timeout: float = 60) -> list[Pod]:
    """Start every replica on its node, wait until all are ready, then publish the endpoints."""
    if cluster.pods():
        raise TestbedError("an app is already deployed; run 'harness undeploy' first")
    cluster.set_app(app)
    pods: list[Pod] = []
    with all_or_none(cluster, pods):
        for service, nodes in placement.items():
            for node in nodes:
                pods.append(cluster.start_pod(service, node))
        deadline = time.monotonic() + timeout
        for pod in pods:
            cluster.wait_ready(pod, max(0.1, deadline - time.monotonic()))
            if on_pod:
                on_pod(pod)
    cluster.publish()
    return fresh(cluster, pods)


@contextmanager
def all_or_none(cluster: "Cluster", pods: list[Pod]) -> Iterator[list[Pod]]:
    """Pods being started into ``pods``: if anything fails (or is interrupted) meanwhile, every one
    started is removed and the endpoints published before the error goes on."""
    try:
        yield pods
    except BaseException:
        for pod in pods:
            cluster.stop_pod(pod, drain_seconds=0)
        cluster.publish()
        raise


def fresh(cluster: "Cluster", pods: list[Pod]) -> list[Pod]:
    """The same pods as the cluster lists them now: on Kubernetes a pod has its address only
    once it runs, after ``start_pod`` returned."""
    now = {p.name: p for p in cluster.pods()}
    return [now.get(p.name, p) for p in pods]


GRACE_S = 0.3  # callers reread endpoints per request: this covers a pick made just before a change


def withdraw(cluster: "Cluster", pods: list[Pod]) -> None:
    """Take pods out of the endpoints; they still serve what they have."""
    for p in pods:
        cluster.retire_pod(p)
    if pods:
        cluster.publish()


def scale_down_order(pods: list[Pod]) -> list[Pod]:
    """A service's pods (oldest first) in the order Kubernetes' ReplicaSet controller deletes them
    when it scales down: those on the node holding most of them first, then the newest (the last
    criteria of its ranking, with every pod running and ready)."""
    per_node: dict[str, int] = {}
    for p in pods:
        per_node[p.node] = per_node.get(p.node, 0) + 1
    order = sorted(range(len(pods)), key=lambda i: (-per_node[pods[i].node], -i))
    return [pods[i] for i in order]


def stop_withdrawn(cluster: "Cluster", pods: list[Pod], grace_seconds: float = GRACE_S) -> None:
    """Stop pods :func:`withdraw` took out, after the grace that lets in-flight picks land (a
    scale-down without it lost a request sent 2 ms after the change), each draining."""
    if pods:
        cluster.pause(grace_seconds)
    for p in pods:
        cluster.stop_pod(p)


def move_pod(cluster: "Cluster", pod: Pod, node: str, grace_seconds: float = GRACE_S, timeout: float = 30) -> Pod:
    """Make-before-break: start the new pod, wait until it is ready, publish it in place of the old
    one, let callers see the change, then drain and stop the old pod. If the new pod never gets
    ready, it is removed and the old one keeps serving."""
    new = cluster.start_pod(pod.service, node)
    try:
        cluster.wait_ready(new, timeout)
    except BaseException:
        cluster.stop_pod(new, drain_seconds=0)
        raise
    withdraw(cluster, [pod])
    stop_withdrawn(cluster, [pod], grace_seconds)
    return fresh(cluster, [new])[0]


def undeploy(cluster: "Cluster") -> int:
    """Stop every pod: those serving (withdrawn, then drained) and those already out of the
    endpoints but still running, which a run or move stopped between its withdraw and its stop
    leaves behind. The number of pods found, serving or on their way out."""
    pods, leaving = cluster.pods_and_leaving()
    withdraw(cluster, pods)
    stop_withdrawn(cluster, pods + leaving)
    return len(pods) + len(leaving)
