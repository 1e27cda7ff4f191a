"""The rescheduler as a long-running service (``harness reschedule``), for a Deployment inside
a K3s cluster (manifests/rescheduler.yaml.j2) or a terminal beside it.

Each round it first acts as the scheduler of ``harness-scheduler`` pods: pods a ReplicaSet
created and nobody bound (after a node failure, a kubectl scale or the in-cluster HPA) are
placed by the policy's placer; then the policy reschedules through the one move loop, as in a
live run. Events go to stdout as JSON lines (``kubectl logs``).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Callable, TextIO

from harness.policies import placer_for
from harness.policies.contract import Policy
from harness.rescheduler.live import Lineage, LiveView, place_new, reschedule
from harness.rescheduler.loop import CycleGuard
from harness.spec.profile import Profile


def json_events(out: TextIO = sys.stdout) -> Callable[..., None]:
    def on_event(kind: str, **detail) -> None:
        out.write(json.dumps({"t": round(time.time(), 3), "event": kind, **detail}, default=str) + "\n")
        out.flush()
    return on_event


def run_service(cluster, profile: Profile, policy: Policy, period_s: float, max_moves: int, rounds: int = 0,
                on_event: Callable[..., None] | None = None, stop: threading.Event | None = None) -> dict[str, int]:
    """Rounds every ``period_s`` until ``rounds`` (0: forever) or ``stop``; returns the totals.
    ``cluster``: a Kubernetes cluster (it lists the pods nobody bound yet)."""
    on_event = on_event or json_events()
    stop = stop or threading.Event()
    app = cluster.app()
    if app is None:
        raise RuntimeError(f"no app is deployed in namespace {cluster.namespace} (ConfigMap harness-app)")
    live = LiveView(app, profile, cluster.state, cluster)
    policy.check(live.view()[0])
    placer = placer_for(policy)
    lock, lineage, guard = threading.Lock(), Lineage(), CycleGuard()
    totals = {"rounds": 0, "bound": 0, "moves": 0}
    on_event("start", policy=policy.name, namespace=cluster.namespace, period_s=period_s)
    while not stop.is_set():
        waiting = cluster.unbound_counts()
        services = [s for s, n in waiting.items() for _ in range(n) if s in app.services]
        if services:
            ready = place_new(placer, live, services, lock, on_event, lineage, "unbound")
            totals["bound"] += len(ready)
            on_event("bound", pods=[p.name for p in ready], nodes=[p.node for p in ready])
        totals["moves"] += reschedule(policy, live, lock, max_moves, on_event, lineage, stop.is_set, guard).moves
        totals["rounds"] += 1
        if rounds and totals["rounds"] >= rounds:
            break
        stop.wait(period_s)
    on_event("stop", **totals)
    return totals
