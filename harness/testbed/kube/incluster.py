"""The rescheduler as a long-running service (``harness reschedule``), for a Deployment inside
the cluster (manifests/rescheduler.yaml.j2) or a terminal beside it.

Each round it first acts as the scheduler of ``harness-scheduler`` pods: pods a ReplicaSet
created and nobody bound (after a node failure, a kubectl scale or the in-cluster HPA) are
placed by the default scheduler's rules; then the policy reschedules, as in a live run. Events
go to stdout as JSON lines (``kubectl logs``).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import Callable, TextIO

from harness.rescheduler import CycleGuard, LiveView, Lineage, check_model_fits, place_new, reschedule
from harness.spec.profile import Profile
from harness.spec.testbed_state import TestbedState
from harness.testbed.kube.backend import KubeCluster


class NoNodePower:
    """Inside the cluster nobody powers nodes off or on."""

    def stop(self, node: str) -> None:
        raise RuntimeError("the in-cluster rescheduler does not fail nodes")

    start = stop


def json_events(out: TextIO = sys.stdout) -> Callable[..., None]:
    def on_event(kind: str, **detail) -> None:
        out.write(json.dumps({"t": round(time.time(), 3), "event": kind, **detail}, default=str) + "\n")
        out.flush()
    return on_event


def in_cluster(state: TestbedState, namespace: str, work_dir: Path) -> KubeCluster:
    """A KubeCluster through the pod's service account."""
    from kubernetes import client, config

    config.load_incluster_config()
    state = state.model_copy(deep=True)
    state.backend_data.update({"namespace": namespace, "failed_nodes": []})
    return KubeCluster(state, work_dir, client.ApiClient(), NoNodePower())


def run_service(cluster: KubeCluster, profile: Profile, policy, policy_name: str, period_s: float, max_moves: int,
                rounds: int = 0, on_event: Callable[..., None] | None = None,
                stop: threading.Event | None = None) -> dict[str, int]:
    """Rounds every ``period_s`` until ``rounds`` (0: forever) or ``stop``; returns the totals."""
    from harness.policies.heuristics import DefaultArgs, KubeDefault

    on_event = on_event or json_events()
    stop = stop or threading.Event()
    app = cluster.app()
    if app is None:
        raise RuntimeError(f"no app is deployed in namespace {cluster.namespace} (ConfigMap harness-app)")
    view = LiveView(app, profile, cluster.state, cluster)
    check_model_fits(policy, view, policy_name)
    placer = policy if not getattr(policy, "moves", False) else KubeDefault(DefaultArgs())
    lock, lineage, guard = threading.Lock(), Lineage(), CycleGuard(view.dyn)
    totals = {"rounds": 0, "bound": 0, "moves": 0}
    on_event("start", policy=policy_name, namespace=cluster.namespace, period_s=period_s)
    while not stop.is_set():
        waiting = cluster.unbound_counts()
        services = [s for s, n in waiting.items() for _ in range(n) if s in app.services]
        if services:
            ready = place_new(placer, view, services, lock, on_event, lineage, "unbound")
            totals["bound"] += len(ready)
            on_event("bound", pods=[p.name for p in ready], nodes=[p.node for p in ready])
        totals["moves"] += reschedule(policy, view, lock, max_moves, on_event, lineage, stop.is_set, guard)
        totals["rounds"] += 1
        if rounds and totals["rounds"] >= rounds:
            break
        stop.wait(period_s)
    on_event("stop", **totals)
    return totals
