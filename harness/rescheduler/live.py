"""The live cluster as the move loop's world, and the placement of new pods on it.

``LiveView`` turns the running cluster into a ClusterView: its pods (oldest first), the nodes up
or down, as background load only the requests of pods on their way out (retired, terminating: on
a testbed the only load the scheduler accounts for is pods' requests), and the latency model
built from the profile and the RTTs the testbed has now.
``LiveWorld`` makes each move make-before-break; ``reschedule`` is one round of the one move
loop on it; ``place_new`` starts pods where the placer says (self-healing, scale-ups).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from harness.errors import PolicyError, TestbedError
from harness.policies.contract import ClusterView, Move, PendingPod, PodView, Policy, checked_place
from harness.rescheduler.loop import CycleGuard, MoveFailed, PlanTimeout, Round, _at_once, run_round
from harness.sim.topology import model_for
from harness.spec.app import App
from harness.spec.profile import Profile, source_profile
from harness.spec.testbed_state import TestbedState
from harness.testbed.cluster import Cluster
from harness.testbed.pods import Pod, move_pod

Event = Callable[..., None]  # on_event(kind, **detail)


class LiveView:
    def __init__(self, app: App, profile: Profile, state: TestbedState, cluster: Cluster,
                 load: Callable[[], tuple[float | None, int | None]] = lambda: (None, None)):
        self.app, self.profile, self.state, self.cluster = app, profile, state, cluster
        self.load = load  # (requests/s, closed-loop users) the app is offered now (None: unknown), for load-aware policies
        self.source = source_profile(profile)  # a calibrated profile's origin: REACH's model as published
        self.background: dict[str, tuple[float, float]] = {}  # node -> (cores, MiB) other tenants hold
        self.starting: set[str] = set()  # pods started and not yet ready (``start_placed``): room held, no replicas yet
        self.refresh()

    def refresh(self) -> None:
        """Rebuild the model from the RTTs the testbed has now (after a latency change)."""
        state = self.state.model_copy(update={"rtt_groups": self.cluster.rtt_groups().to_json(), "rtt_configured_ms": {}})
        self.model = model_for(self.app, self.profile, state, rtt="configured")
        self.uncalibrated = None if self.source is None else model_for(self.app, self.source, state, rtt="configured")
        self.nodes = list(self.model.topo.nodes)
        self._hosts = set(self.nodes)
        self._requests = {s: (self.app.cpu_request(s), self.app.memory_request(s)) for s in self.app.services}

    def view(self) -> tuple[ClusterView, dict[str, Pod]]:
        """The cluster as a policy sees it, and the Pod behind each pod name. Pods on their way out
        (``Cluster.leaving``) and pods still starting (``starting``) are not replicas, but their
        room is held, as background load."""
        serving, leaving = self.cluster.pods_and_leaving()
        leaving = leaving + [p for p in serving if p.name in self.starting]
        pods = {p.name: p for p in serving if p.node in self._hosts and p.name not in self.starting}
        up = [self.cluster.node_up(n) for n in self.nodes]
        rate, users = self.load()
        bg = [self.background.get(n, (0.0, 0.0)) for n in self.nodes]
        return ClusterView.build(self.app, self.model, up, self._pod_views(pods.values()),
                                 [c for c, _ in bg], [m for _, m in bg], rate=rate, users=users,
                                 leaving=self._pod_views(leaving)), pods

    def _pod_views(self, pods) -> list[PodView]:
        return [PodView(p.name, p.service, p.node, *self._requests[p.service])
                for p in pods if p.node in self._hosts and p.service in self._requests]

    def predicted(self, rate: float | None = None, users: int | None = None) -> dict | None:
        """The model's latency for the current pods with its breakdown (``LatencyModel.predict``),
        and with a known open-loop ``rate`` (requests/s) the queueing model's (``queueing_ms``, per
        discipline), with more than one closed-loop user the closed form's (``closed_ms``); with a
        calibrated profile, the uncalibrated model's latency too (``uncalibrated_ms``); None while a
        service has no pod (the app cannot answer, the model has no value)."""
        view = self.view()[0]
        if view.latency_ms() is None:
            return None
        out = self.model.predict_counts(view.counts())
        if self.uncalibrated is not None:
            out["uncalibrated_ms"] = self.uncalibrated.predict_counts(view.counts())["latency_ms"]
        if rate is not None:
            from harness.sim.queueing import DISCIPLINES, QueueingModel

            out["rate_per_s"] = rate
            lat = {d: QueueingModel(self.model, d).latency(view.counts(), rate) for d in DISCIPLINES}
            out["queueing_ms"] = {d: v if v != float("inf") else None for d, v in lat.items()}  # None: saturated
        if users is not None and users > 1:
            from harness.sim.queueing import QueueingModel

            out["users"] = users
            out["closed_ms"] = QueueingModel(self.model).closed_latency(view.counts(), users)
        return out

    def placement(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {s: [] for s in self.app.services}
        for pod in self.cluster.pods():
            out.setdefault(pod.service, []).append(pod.node)
        return out


@dataclass
class Lineage:
    """Which original pod each live pod descends from (moves replace pods), for the moved-pod share."""

    root: dict[str, str] = field(default_factory=dict)
    moved: set[str] = field(default_factory=set)

    def add(self, pod: Pod) -> None:
        self.root.setdefault(pod.name, pod.name)

    def replaced(self, old: Pod, new: Pod) -> None:
        self.root[new.name] = self.root.get(old.name, old.name)
        self.moved.add(self.root[new.name])


class LiveWorld:
    """Moves on the live cluster: make-before-break, holding ``lock`` (self-healing and scaling
    take it too, so no decision is made on a stale view)."""

    def __init__(self, live: LiveView, lock: threading.Lock, lineage: Lineage,
                 clock: Callable[[], float] = time.monotonic):
        self.live, self.lock, self.lineage, self.clock = live, lock, lineage, clock  # clock: the run's (a move's seconds)
        self._pods: dict[str, Pod] = {}

    def view(self) -> ClusterView:
        view, self._pods = self.live.view()
        return view

    def apply(self, move: Move, view: ClusterView) -> dict:
        pod = self._pods[move.pod]
        t = self.clock()
        try:
            new = move_pod(self.live.cluster, pod, move.node)
        except TestbedError as exc:
            raise MoveFailed(str(exc)) from None
        self.lineage.replaced(pod, new)
        return {"new_pod": new.name, "seconds": round(self.clock() - t, 3)}

    def turn(self):
        return self.lock


def reschedule(policy: Policy, live: LiveView, lock: threading.Lock, max_moves: int, on_event: Event,
               lineage: Lineage, should_stop: Callable[[], bool] = lambda: False,
               guard: CycleGuard | None = None, think=None, clock: Callable[[], float] = time.monotonic) -> Round:
    """One round of the move loop on the live cluster (``should_stop``: the run ends, or
    self-healing waits: rescheduling comes after it, as in REACH §VII-D; ``think``: how the
    policy's plan is called, e.g. within a ``loop.Budget``; ``clock``: the run's, which a move's
    seconds are counted on: a simulated run's virtual time)."""
    return run_round(policy, LiveWorld(live, lock, lineage, clock), max_moves, guard, on_event, should_stop,
                     **({"think": think} if think else {}))


def place_new(placer: Policy, live: LiveView, services: list[str], lock: threading.Lock, on_event: Event,
              lineage: Lineage, reason: str, prefer: list[str | None] | None = None, timeout: float = 30,
              think: Callable[[Callable[[], list]], list] = _at_once) -> list[Pod]:
    """Start one pod per entry of ``services`` where ``placer`` says (``think``: how ``place`` is
    called, e.g. within a ``loop.Budget``; past it the pods stay pending) (self-healing, scale-up), or
    on the ``prefer``red node when it is up and has room (a crashed pod restarts where it was, as
    kubelet restarts a container). All start at once and are published when ready. The lock is held
    throughout: the rescheduler acts only after the pods serve, never on half-started ones."""
    started: list[Pod] = []
    ready: list[Pod] = []
    with lock:
        view, _ = live.view()
        pending = [view.pending(s, f"{s}#new{i}") for i, s in enumerate(services)]
        where: list[str | None] = [None] * len(pending)
        ask = []
        for i, pod in enumerate(pending):
            want = prefer[i] if prefer else None
            if want in live.nodes and view.feasible(pod)[view.index(want)]:
                where[i] = want
                view = view.with_pod(pod, want)
            else:
                ask.append(i)
        if ask:
            try:
                asked = [pending[i] for i in ask]
                nodes = checked_place(think(lambda: placer.place(view, asked)), view, len(ask))
            except PlanTimeout as exc:  # counted as a plan's: the policy did not answer in time
                on_event("plan-timeout", reason=f"place(): {exc}")
                nodes = [None] * len(ask)
            except Exception as exc:  # user code (a raise, or what the contract does not allow): its pods stay pending
                on_event("policy-error", where="place", error=f"{type(exc).__name__}: {exc}"[:300])
                nodes = [None] * len(ask)
            for i, node in zip(ask, nodes):
                where[i] = node
        for pod, node in zip(pending, where):
            if node is None:
                on_event("pending", service=pod.service, reason=reason, detail="no node has room")
                continue
            started.append(live.cluster.start_pod(pod.service, node))
        deadline = time.monotonic() + timeout
        for pod in started:
            try:
                live.cluster.wait_ready(pod, max(0.1, deadline - time.monotonic()))
            except TestbedError as exc:
                on_event("start-failed", pod=pod.name, service=pod.service, node=pod.node, error=str(exc)[:200])
                live.cluster.stop_pod(pod, drain_seconds=0)
                continue
            lineage.add(pod)
            ready.append(pod)
        live.cluster.publish()
    return ready


class StartPlaced:
    """Pods started at once on the nodes already chosen, then waited for by a thread of their own
    and published when ready: a deployment request's pods, so the request stream takes its next
    arrival on time instead of after these pods start (``place_new`` holds the lock throughout).
    Meanwhile their room is held (``LiveView.starting``) and no policy sees them as replicas, so
    none moves a half-started pod. Made holding ``lock``, in the same hold as the decision, so
    nothing changes the cluster in between. ``join()``: the pods that got ready."""

    def __init__(self, live: LiveView, lock: threading.Lock, services: list[str], nodes: list[str], on_event: Event,
                 lineage: Lineage, on_ready: Callable[[], None] = lambda: None, timeout: float = 30):
        self.live, self.lock, self.on_event, self.lineage, self.on_ready = live, lock, on_event, lineage, on_ready
        self.pods = [live.cluster.start_pod(s, n) for s, n in zip(services, nodes)]
        live.starting.update(p.name for p in self.pods)
        self.ready: list[Pod] = []
        self.thread = threading.Thread(target=self._wait, args=(time.monotonic() + timeout,), daemon=True,
                                       name="start-placed")
        self.thread.start()

    def _wait(self, deadline: float) -> None:
        failed = []
        for pod in self.pods:
            try:
                self.live.cluster.wait_ready(pod, max(0.1, deadline - time.monotonic()))
                self.ready.append(pod)
            except TestbedError as exc:
                failed.append(pod)
                self.on_event("start-failed", pod=pod.name, service=pod.service, node=pod.node, error=str(exc)[:200])
        with self.lock:
            for pod in failed:
                self.live.cluster.stop_pod(pod, drain_seconds=0)
            for pod in self.ready:
                self.lineage.add(pod)
            self.live.starting.difference_update(p.name for p in self.pods)
            self.live.cluster.publish()
            self.on_ready()

    def join(self, timeout: float | None = None) -> list[Pod]:
        self.thread.join(timeout)
        return self.ready


def initial_placement(placer: Policy, live: LiveView, replicas: dict[str, int],
                      pending: list[str] | None = None,
                      think: Callable[[Callable[[], list]], list] = _at_once) -> dict[str, list[str]]:
    """Where each replica goes at deployment: one batch for ``placer`` on the empty cluster, replica
    by replica across services, as kube-scheduler sees a ReplicaSet's pods arrive. A replica no
    node has room for is an error, unless ``pending`` is given: then its service is appended there
    and the pod stays pending (an app paper 003's placers reject)."""
    view, _ = live.view()
    view = ClusterView.build(view.app, view.model, view.up, [], view.background_cpu, view.background_memory_mib)
    # the app is not deployed yet: only what others hold
    order: list[PendingPod] = []
    for r in range(max(replicas.values())):
        for service, n in replicas.items():
            if r < n:
                order.append(view.pending(service, f"{service}#{r + 1}"))
    out: dict[str, list[str]] = {s: [] for s in replicas}
    try:
        nodes = checked_place(think(lambda: placer.place(view, order)), view, len(order))
    except PlanTimeout as exc:
        raise PolicyError(f"policy {placer.name!r} at deployment: place() gave no placement ({exc})") from exc
    except Exception as exc:  # user code (a raise, or a NaN, an int, an unknown node): one line, not a traceback
        from harness.policies.contract import BadOutput

        if isinstance(exc, BadOutput):
            raise PolicyError(f"policy {placer.name!r} at deployment: {exc}") from exc
        raise PolicyError(f"policy {placer.name!r} raised in place() at deployment: {type(exc).__name__}: {exc}") from exc
    for pod, node in zip(order, nodes):
        if node is None and pending is not None:
            pending.append(pod.service)
            continue
        if node is None:
            raise TestbedError(f"no node has room for replica {pod.name.split('#')[1]} of {pod.service} "
                               f"(placed by {placer.name})")
        out[pod.service].append(node)
    return out


def moved_share(lineage: Lineage) -> float:
    """Share of the pods the run had (at deployment, or created by self-healing and scaling;
    a moved or restarted pod counts as the pod it replaced) that the rescheduler moved."""
    pods = set(lineage.root.values())
    return len(lineage.moved) / len(pods) if pods else 0.0
