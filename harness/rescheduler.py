"""The live control loop's view of the cluster and its rescheduling round.

``LiveView`` turns the running cluster into the simulator's state (a Batch of one: the pods of
each service in their slots, the nodes up or down, no background load: on a testbed the only
load the scheduler accounts for is the pods' requests), so a policy trained in CEEnv acts on
the live cluster unchanged. ``reschedule`` asks the policy for moves until it says idle or the
round's cap, applying each make-before-break.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from harness.errors import TestbedError, UserError
from harness.sim.ceenv import Batch, Dynamics, EnvConfig
from harness.sim.topology import model_for
from harness.spec.app import App
from harness.spec.profile import Profile
from harness.spec.testbed_state import TestbedState
from harness.testbed.cluster import Cluster
from harness.testbed.pods import Pod, move_pod

Event = Callable[..., None]  # on_event(kind, **detail)


class LiveView:
    def __init__(self, app: App, profile: Profile, state: TestbedState, cluster: Cluster, max_replicas: int = 5):
        self.app, self.profile, self.state, self.cluster = app, profile, state, cluster
        self.cfg = EnvConfig(max_replicas=max_replicas)
        self.refresh()

    def refresh(self) -> None:
        """Rebuild the model from the RTTs the testbed has now (after a latency change)."""
        state = self.state.model_copy(update={"rtt_configured_ms": self.cluster.rtt_configured()})
        self.dyn = Dynamics(model_for(self.app, self.profile, state, rtt="configured"), self.cfg)
        self.nodes = list(self.dyn.model.topo.nodes)

    def snapshot(self) -> tuple[Batch, dict[int, Pod]]:
        """The cluster as the simulator's state, and which pod sits in which slot."""
        dyn = self.dyn
        st = dyn.new_batch(1)
        st.up[0] = [self.cluster.node_up(n) for n in self.nodes]
        slots: dict[int, Pod] = {}
        by_service: dict[str, list[Pod]] = {}
        for pod in self.cluster.pods():
            by_service.setdefault(pod.service, []).append(pod)
        for s, service in enumerate(dyn.model.services):
            # pods beyond max_replicas are invisible to the policy (the HPA's max keeps within it)
            for i, pod in enumerate(by_service.get(service, [])[: self.cfg.max_replicas]):
                if pod.node in self.nodes:
                    slot = s * self.cfg.max_replicas + i
                    st.node[0, slot] = self.nodes.index(pod.node)
                    slots[slot] = pod
        with np.errstate(invalid="ignore", divide="ignore"):  # a service without pods: no latency (NaN)
            st.latency = dyn.latency(st)
        return st, slots

    def free_slot(self, st: Batch, service: str) -> int | None:
        s = self.dyn.model.services.index(service)
        for slot in range(s * self.cfg.max_replicas, (s + 1) * self.cfg.max_replicas):
            if st.node[0, slot] < 0:
                return slot
        return None

    def predicted_ms(self) -> float | None:
        """The model's latency for the current pods; None while a service has no pod (the app
        cannot answer, the model has no value)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            st, _ = self.snapshot()
        v = float(st.latency[0])
        return v if np.isfinite(v) else None

    def placement(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {s: [] for s in self.app.services}
        for pod in self.cluster.pods():
            out.setdefault(pod.service, []).append(pod.node)
        return out


def check_model_fits(policy, view: LiveView, policy_name: str) -> None:
    """A learned policy sees a fixed number of nodes and slots: refuse one trained elsewhere."""
    meta = getattr(policy, "meta", None)
    if not meta:
        return
    want = (meta.get("obs_dim"), meta.get("n_actions"))
    have = (view.dyn.obs_dim, view.dyn.n_actions)
    if want != have:
        raise UserError(f"the {policy_name} model was trained for {want[1] - 1} pod-node moves, this testbed and app "
                        f"have {have[1] - 1}; train it on this testbed's profile", field="--policy")


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


class CycleGuard:
    """Stops a policy going round in circles. A deterministic policy can propose A -> B in one
    placement and B -> A in the next, forever (seen live: 40 moves of one replica between two
    edge nodes). A move that would bring back a placement already held since the last change
    the rescheduler did not make (a failure, self-healing, scaling) is not applied, and the
    round ends. Used alike by the live loop and ``harness evaluate``."""

    def __init__(self, dyn: Dynamics):
        self.dyn = dyn
        self.seen: set[bytes] = set()
        self.last: bytes | None = None

    def key(self, st: Batch, b: int = 0) -> bytes:
        return self.dyn.counts(st.node[b:b + 1]).astype(np.int16).tobytes()

    def start(self, st: Batch, b: int = 0) -> None:
        k = self.key(st, b)
        if k != self.last:  # someone else changed the pods: a new start
            self.seen = {k}
            self.last = k

    def allows(self, st_after: Batch, b: int = 0) -> bool:
        return self.key(st_after, b) not in self.seen

    def moved(self, st_after: Batch, b: int = 0) -> None:
        self.last = self.key(st_after, b)
        self.seen.add(self.last)


def reschedule(policy, view: LiveView, lock: threading.Lock, max_moves: int, on_event: Event,
               lineage: Lineage, should_stop: Callable[[], bool] = lambda: False, guard: CycleGuard | None = None) -> int:
    """One round: moves until the policy idles, the cap, a failed move, or ``should_stop()``
    (the run ends, or self-healing waits: rescheduling comes after it, as in REACH §VII-D)."""
    if max_moves <= 0 or not getattr(policy, "moves", False):
        return 0
    moves = 0
    guard = guard or CycleGuard(view.dyn)
    with lock:
        st, _ = view.snapshot()
        guard.start(st)
        if hasattr(policy, "prepare") and not policy.prepare(view.dyn, st, 0):
            on_event("reschedule-skipped", reason="the policy cannot handle this size")
            return 0
    while moves < max_moves and not should_stop():
        with lock:
            st, slots = view.snapshot()
            move = policy.next_move(view.dyn, st, 0)
            if move is None:
                break
            slot, node_idx = move
            pod, target = slots.get(slot), view.nodes[node_idx]
            if pod is None or pod.node == target:
                on_event("move-refused", slot=int(slot), node=target, reason="no pod in that slot or already there")
                break
            before = float(st.latency[0])
            st.node[0, slot] = node_idx
            if not guard.allows(st):
                on_event("cycle-stopped", pod=pod.name, service=pod.service, source=pod.node, target=target)
                break
            after = float(view.dyn.latency(st)[0])
            t = time.monotonic()
            try:
                new = move_pod(view.cluster, pod, target)
            except TestbedError as exc:
                on_event("move-failed", pod=pod.name, service=pod.service, source=pod.node, target=target,
                         error=str(exc)[:200])
                break
            lineage.replaced(pod, new)
            guard.moved(st)
            moves += 1
            on_event("move", pod=pod.name, new_pod=new.name, service=pod.service, source=pod.node, target=target,
                     predicted_before_ms=round(before, 2), predicted_after_ms=round(after, 2),
                     seconds=round(time.monotonic() - t, 3))
    return moves


def place_new(placer, view: LiveView, services: list[str], lock: threading.Lock, on_event: Event,
              lineage: Lineage, reason: str, prefer: list[str | None] | None = None, timeout: float = 30) -> list[Pod]:
    """Start one pod per entry of ``services`` where ``placer`` says (self-healing, scale-up), or
    on the ``prefer``red node when it is up (a crashed pod restarts where it was, as kubelet
    restarts a container). All start at once and are published when ready. The lock is held
    throughout: the rescheduler acts only after the pods serve, never on half-started ones."""
    started: list[Pod] = []
    ready: list[Pod] = []
    with lock:
        st, _ = view.snapshot()
        for i, service in enumerate(services):
            slot = view.free_slot(st, service)
            node_idx = None
            want = prefer[i] if prefer else None
            if slot is not None and want in view.nodes and st.up[0, view.nodes.index(want)]:
                node_idx = view.nodes.index(want)
                st.node[0, slot] = node_idx
            elif slot is not None:
                node_idx = placer.place(view.dyn, st, 0, slot)
            if node_idx is None:
                on_event("pending", service=service, reason=reason, detail="no node has room (or no free slot)")
                continue
            started.append(view.cluster.start_pod(service, view.nodes[int(node_idx)]))
        deadline = time.monotonic() + timeout
        for pod in started:
            try:
                view.cluster.wait_ready(pod, max(0.1, deadline - time.monotonic()))
            except TestbedError as exc:
                on_event("start-failed", pod=pod.name, service=pod.service, node=pod.node, error=str(exc)[:200])
                view.cluster.stop_pod(pod, drain_seconds=0)
                continue
            lineage.add(pod)
            ready.append(pod)
        view.cluster.publish()
    return ready


def initial_placement(placer, view: LiveView, replicas: dict[str, int]) -> dict[str, list[str]]:
    """Where each replica goes at deployment, by ``placer`` on the empty cluster."""
    st = view.dyn.new_batch(1)
    st.up[0] = [view.cluster.node_up(n) for n in view.nodes]
    out: dict[str, list[str]] = {}
    for service, n in replicas.items():
        if n > view.cfg.max_replicas:
            raise UserError(f"{n} replicas of {service}; the rescheduler's view holds at most {view.cfg.max_replicas}",
                            field="replicas")
        out[service] = []
    # replica by replica across services, as kube-scheduler sees a ReplicaSet's pods arrive
    for r in range(max(replicas.values())):
        for service, n in replicas.items():
            if r >= n:
                continue
            slot = view.dyn.model.services.index(service) * view.cfg.max_replicas + r
            node = placer.place(view.dyn, st, 0, slot)
            if node is None:
                raise TestbedError(f"no node has room for replica {r + 1} of {service}")
            out[service].append(view.nodes[int(node)])
    return {s: out[s] for s in replicas}


def moved_share(lineage: Lineage) -> float:
    """Share of the pods the run had (at deployment, or created by self-healing and scaling;
    a moved or restarted pod counts as the pod it replaced) that the rescheduler moved."""
    pods = set(lineage.root.values())
    return len(lineage.moved) / len(pods) if pods else 0.0

