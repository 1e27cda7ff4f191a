"""How long a pod takes to start and to go on a testbed, per node type, through the Cluster
interface (so on every backend): the simulator's pod lifecycle (``Profile.lifecycle``).

- start to ready: from asking for the pod (``start_pod``) until it is ready (``wait_ready``
  returns): what a move, a self-healing placement, a restart or a scale-up waits before the new
  pod serves;
- stop to gone: from taking it out of the endpoints and stopping it (``stop_pod``, which drains
  it) until the cluster no longer lists it, serving or leaving: how long its node's room stays
  held (Kubernetes' graceful deletion; the local testbed's cell exiting).

Each pod is started and waited for alone, one after another, so each time is its own (pods
started together and waited for in turn would each count the slowest before them). ``clock``
and ``sleep`` are the wall clock's unless a test gives its own.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Callable

from harness.errors import TestbedError
from harness.spec.profile import PodLifecycle
from harness.testbed.pods import Pod, all_or_none, fresh

if TYPE_CHECKING:
    from harness.spec.app import App
    from harness.testbed.cluster import Cluster

FIELDS = ("node_type", "node", "service", "pod", "ready_s", "gone_s")  # lifecycle.csv: one row per pod timed


@dataclass(frozen=True)
class PodTimes:
    node_type: str
    node: str
    service: str
    pod: str
    ready_s: float
    gone_s: float

    def row(self) -> dict:
        return asdict(self)


def timed_start(cluster: "Cluster", service: str, node: str, timeout: float = 60,
                clock: Callable[[], float] | None = None) -> tuple[Pod, float]:
    """Start one pod and wait until it is ready: the pod and the seconds that took. A pod that
    does not get ready is removed and the error raised."""
    clock = clock or time.monotonic
    t0 = clock()
    pod = cluster.start_pod(service, node)
    try:
        cluster.wait_ready(pod, timeout)
    except BaseException:
        cluster.stop_pod(pod, drain_seconds=0)
        raise
    return pod, clock() - t0


def timed_stop(cluster: "Cluster", pod: Pod, timeout: float = 60, clock: Callable[[], float] | None = None,
               sleep: Callable[[float], None] | None = None, poll_s: float = 0.05) -> float:
    """Take the pod out of the endpoints, stop it and wait until the cluster lists it no more:
    the seconds from the stop until it was gone (at most ``timeout``: then TestbedError)."""
    clock, sleep = clock or time.monotonic, sleep or time.sleep
    cluster.retire_pod(pod)
    cluster.publish()
    t0 = clock()
    cluster.stop_pod(pod)
    while True:
        serving, leaving = cluster.pods_and_leaving()
        if all(p.name != pod.name for p in serving + leaving):
            return clock() - t0
        if clock() - t0 > timeout:
            raise TestbedError(f"pod {pod.name} on {pod.node} not gone {timeout:.0f} s after it was stopped")
        sleep(poll_s)


def timed_deploy(cluster: "Cluster", app: "App", placement: dict[str, list[str]], timeout: float = 60,
                 clock: Callable[[], float] | None = None) -> tuple[list[Pod], list[float]]:
    """``testbed.pods.deploy`` with each pod started and waited for alone: the pods (published) and
    each one's seconds from start to ready. A pod that does not get ready removes them all."""
    if cluster.pods():
        raise TestbedError("an app is already deployed; run 'harness undeploy' first")
    cluster.set_app(app)
    pods: list[Pod] = []
    took: list[float] = []
    with all_or_none(cluster, pods):
        for service, nodes in placement.items():
            for node in nodes:
                pod, seconds = timed_start(cluster, service, node, timeout, clock)
                pods.append(pod)
                took.append(seconds)
    cluster.publish()
    return fresh(cluster, pods), took


def timed_undeploy(cluster: "Cluster", timeout: float = 60, clock: Callable[[], float] | None = None,
                   sleep: Callable[[float], None] | None = None) -> dict[str, float]:
    """Every pod stopped, one after another, each waited out: pod name -> seconds from its stop
    until it was gone (a pod not gone within ``timeout`` has no entry)."""
    out = {}
    for pod in cluster.pods():
        try:
            out[pod.name] = timed_stop(cluster, pod, timeout, clock, sleep)
        except TestbedError:
            continue
    return out


def measure(cluster: "Cluster", app: "App", nodes: dict[str, str], clock: Callable[[], float] | None = None,
            sleep: Callable[[float], None] | None = None, timeout: float = 60) -> list[PodTimes]:
    """One pod of each of the app's services on one node of each type (``nodes``: type -> node),
    each started and waited for alone, then each stopped and waited out alone. The testbed must
    hold no pods."""
    out = []
    for service in app.services:
        pods, ready = timed_deploy(cluster, app, {service: list(nodes.values())}, timeout, clock)
        gone = timed_undeploy(cluster, timeout, clock, sleep)
        out += times_of(cluster, pods, ready, gone)
    return out


def times_of(cluster: "Cluster", pods: list[Pod], ready: list[float], gone: dict[str, float]) -> list[PodTimes]:
    """``timed_deploy``'s and ``timed_undeploy``'s measures as one record per pod (one whose stop
    was not waited out is left out)."""
    return [PodTimes(cluster.node(p.node).type, p.node, p.service, p.name, round(r, 3), round(gone[p.name], 3))
            for p, r in zip(pods, ready) if p.name in gone]


def summarize(times: list[PodTimes]) -> dict[str, PodLifecycle]:
    """Per node type, the profile's record: means and standard deviations over its pods."""
    by_type: dict[str, list[PodTimes]] = {}
    for t in times:
        by_type.setdefault(t.node_type, []).append(t)

    def sd(v: list[float]) -> float:
        return round(statistics.pstdev(v), 3) if len(v) > 1 else 0.0
    return {k: PodLifecycle(ready_s=round(statistics.fmean(p.ready_s for p in v), 3), ready_sd_s=sd([p.ready_s for p in v]),
                            gone_s=round(statistics.fmean(p.gone_s for p in v), 3), gone_sd_s=sd([p.gone_s for p in v]),
                            samples=len(v))
            for k, v in sorted(by_type.items())}


def first_of_each_type(cluster: "Cluster") -> dict[str, str]:
    """Node type -> its first node that pods may run on (clients left out)."""
    out: dict[str, str] = {}
    for n in cluster.nodes:
        if n.role != "client":
            out.setdefault(n.type, n.name)
    return out
