"""What one run of a scenario does with one policy, in either world: the live testbed
(``harness.scenarios.live.LiveRun``) or a simulated cluster in virtual time
(``harness.scenarios.simrun.SimRun``). Deployment, fault injection and self-healing, crash restarts,
scaling and the run's events and placements are written once here, against the Cluster interface;
the scenario's elements (``harness.scenarios.elements``) are drivers that act on a run at their
times. A world supplies its clock (``now``), how a driver is driven (``drive``: a thread sleeping
on the wall clock, or a queue of virtual times) and how work beside the timeline runs (``spawn``).

Every change of pods holds ``lock``, so a move, a self-healing placement and a scale-up never
decide on a stale view of each other.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Callable, Iterator

from harness import faults
from harness.errors import OutputError
from harness.policies import placer_for
from harness.scenarios import extras
from harness.policies.contract import Policy
from harness.rescheduler.live import Lineage, LiveView, StartPlaced, initial_placement, moved_share, place_new
from harness.rescheduler.loop import Budget
from harness.results import placement_metrics as pm
from harness.results import summary as summ
from harness.results.rundir import RunDir
from harness.scenarios import elements
from harness.spec.app import App
from harness.spec.profile import Profile
from harness.spec.scenario import FaultParams, Scenario
from harness.spec.testbed_state import TestbedState
from harness.testbed.cluster import Cluster
from harness.testbed.pods import Pod, deploy, scale_down_order, stop_withdrawn, undeploy, withdraw

Driver = Iterator[float]  # a scenario element at work: it acts, then yields how many seconds until it acts again


@dataclass
class Plan:
    scenario: Scenario
    app: App  # replicas already as the scenario asks
    profile: Profile
    state: TestbedState
    policy_name: str
    policy: Policy
    seed: int = 0  # what the run draws from: the load generator's arrivals, the simulated loads (harness.seeds)
    gap_time_limit_s: float = 0.0  # > 0: paper 003's problem gets its optimality gap (HiGHS, this budget)
    variability: str = "drawn"  # simulation: "drawn" per request and pod (sim.variability), or "means" only


class RunBase(ABC):
    simulated = False  # whether fault kinds give their simulated effect

    def __init__(self, cluster: Cluster, plan: Plan, out: RunDir):
        self.cluster, self.plan, self.out = cluster, plan, out
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.lineage = Lineage()
        self.view = LiveView(plan.app, plan.profile, plan.state, cluster, load=self.offered_load)
        self.placer = placer_for(plan.policy)
        # every call of the policy's (place, plan) within one wall-clock budget, in every world: a policy
        # that hangs costs the run a plan-timeout event, never the run (nor, in virtual time, forever)
        self.budget = Budget.of(plan.policy, plan.scenario.rescheduler.plan_budget_s)  # its plan()s
        self.place_budget = Budget.of(self.placer, plan.scenario.rescheduler.plan_budget_s)  # the placer's place()s
        self.undo: list[Callable[[], None]] = []  # what faults left to undo at clean-up, oldest first
        self.fault_log: list[dict] = []
        self.moves = 0
        self.pods_at_start = 0
        self.healing: set[float] = set()  # faults whose self-healing is under way; the rescheduler waits

    # -------------------------------------------------------------- the world's part
    @abstractmethod
    def now(self) -> float:
        """Seconds on the run's clock (Unix time live; virtual time in a simulated run)."""

    @abstractmethod
    def spawn(self, fn: Callable[[], None], name: str) -> None:
        """Run ``fn`` beside the timeline (live: a thread; simulated: at once). An exception in it
        is an ``error`` event, never the end of the run."""

    @abstractmethod
    def drive(self, driver: Driver, name: str) -> None:
        """Drive one scenario element from now on (live: its own thread; simulated: the queue)."""

    def start_placed(self, services: list[str], nodes: list[str], on_ready: Callable[[], None]) -> StartPlaced | None:
        """Pods started on the nodes already chosen, made ready beside the run, published when they
        are (a deployment request's: ``elements.request_stream``); made holding ``lock``. None: the
        world starts them at once instead (a simulation without pod lifecycle)."""
        return StartPlaced(self.view, self.lock, services, nodes, self.event, self.lineage, on_ready=on_ready)

    def pods_changed(self, reason: str) -> None:
        """A world's look at a change of pods that records no placement (a crashed pod taken out,
        its replacement serving)."""

    def start_load(self, t0: float) -> None:
        """The load started at ``t0``: its event, then every element the scenario has, driven."""
        sc = self.plan.scenario
        self.out.t0 = t0
        self.event("load-start", t=t0, loads=[
            {"mode": spec.mode, "entry": self.plan.app.resolve_entry(spec.entry),
             "steps": [s.model_dump() for s in spec.steps], "trace_events": len(spec.trace)} for spec in sc.loads()])
        for element in elements.wanted(sc):
            self.drive(element.driver(self), element.__name__.rsplit(".", 1)[1])

    def t_run(self) -> float:
        """Seconds since the load started (0 before)."""
        return 0.0 if self.out.t0 is None else self.now() - self.out.t0

    def on_event(self, row: dict) -> None:
        """A world's look at each event written (the live display)."""

    def guarded(self, fn: Callable[[], None], name: str) -> Callable[[], None]:
        """``fn`` with its failure made an event: a failing helper must not kill the run."""
        def run():
            try:
                fn()
            except OutputError:
                self.stop.set()  # the results cannot be kept: the main loop sees out.failed and stops the run
            except Exception as exc:
                try:
                    self.event("error", where=name, error=f"{type(exc).__name__}: {exc}"[:300])
                except OutputError:
                    self.stop.set()
        return run

    # -------------------------------------------------------------- load
    def offered_load(self) -> tuple[float | None, int | None]:
        """(requests/s, closed-loop users) the scenario offers the app now, each None unless every
        load is of that kind; (None, None) before the load starts."""
        if self.out.t0 is None:
            return None, None
        t_run = self.t_run()
        return open_rate(self.plan.scenario, t_run), closed_users(self.plan.scenario, t_run)

    # -------------------------------------------------------------- events
    def event(self, kind: str, t: float | None = None, **detail) -> None:
        row = self.out.event(kind, t=self.now() if t is None else t, **detail)
        self.on_event(row)
        if kind == "move":  # every placement held gets its own interval (sim vs real in the report)
            self.record_placement("move")

    def record_placement(self, reason: str) -> None:
        t, sc = self.t_run(), self.plan.scenario
        rate, users = open_rate(sc, t), closed_users(sc, t)
        self.out.placement(self.view.placement(), self.view.predicted(rate, users), reason, t=self.now())

    # -------------------------------------------------------------- what the scenario's elements do
    def deploy(self) -> None:
        sc = self.plan.scenario
        for element in elements.wanted(sc):
            if hasattr(element, "before_deploy"):
                element.before_deploy(self)
        replicas = {s: spec.replicas for s, spec in self.plan.app.services.items()}
        # a family's problem (paper 003's) may let a placer reject an app: its pods stay pending, and say so
        pending: list[str] | None = [] if any(x.applies(self.plan.app) for x in extras.extras()) else None
        placement = initial_placement(self.placer, self.view, replicas, pending, think=self.place_budget)
        pods = deploy(self.cluster, self.plan.app, placement)
        for service in pending or []:
            self.event("pending", service=service, reason="deploy", detail="no node has room")
        for p in pods:
            self.lineage.add(p)
        self.pods_at_start = len(pods)
        self.event("deploy", placement=placement, placed_by=self.placer.name, scenario=sc.name)
        self.record_placement("deploy")

    def place_new(self, services: list[str], reason: str, prefer: list[str | None] | None = None) -> list[Pod]:
        """New pods where the placer says (or where ``prefer`` says, when there is room)."""
        return place_new(self.placer, self.view, services, self.lock, self.event, self.lineage, reason, prefer=prefer,
                         think=self.place_budget)

    def heal(self, lost: list[Pod], t_fault: float, label: str) -> None:
        """Kubernetes' self-healing: the lost pods again, placed by the placer on the nodes left. A pod
        that never served (the new half of a move the failure cut short) is not replaced: the move
        failed and its old pod serves on."""
        lost = [p for p in lost if p.name in self.lineage.root]
        if not lost:  # nothing that served was lost: nothing to wait for
            for f in self.fault_log:
                if f["t"] == t_fault:
                    f["healed_s"] = 0.0
            return
        ready = self.place_new([p.service for p in lost], label)
        took = self.now() - t_fault
        self.event("healed", reason=label, pods=[p.name for p in ready], nodes=[p.node for p in ready],
                   lost=len(lost), seconds=round(took, 3))
        for f in self.fault_log:
            if f["t"] == t_fault:
                f["healed_s"] = round(took, 3) if len(ready) == len(lost) else None
        self.record_placement(label)

    def _heal_then_release(self, lost: list[Pod], t: float) -> None:
        try:
            self.heal(lost, t, "self-healing")
        finally:
            self.healing.discard(t)

    def inject(self, fault: FaultParams, scheduled: float) -> None:
        """Do the fault through its kind's plug-in (its simulated effect in a simulated run), write
        its event, then what follows it."""
        t = self.now()
        ctx = _Injection(self)
        detail, window = faults.inject(ctx, fault, simulated=self.simulated)
        entry = {"kind": fault.kind, "t": t, "scheduled_s": fault.at_s, "actual_s": round(t - self.out.t0, 3),
                 "late_s": round(t - scheduled, 3)}
        if ctx.lost is not None:
            self.healing.add(t)  # before self-healing starts: no new move may slip in between
            entry["healed_s"] = None
        self.fault_log.append(entry)
        self.event(fault.kind, **detail, late_s=entry["late_s"], window_s=window)
        if ctx.lost is not None:
            self.record_placement(fault.kind)
            lost = ctx.lost
            self.spawn(lambda: self._heal_then_release(lost, t), "heal")
        if ctx.relearn:
            self.spawn(self._relearn_topology, "topology")

    def _relearn_topology(self) -> None:
        with self.lock:  # not while a move decides on the old RTTs
            self.view.refresh()
        self.record_placement("latency")

    def watch_crashes(self) -> None:
        """A crashed cell is an error for its callers until the harness replaces it on its node
        (as kubelet restarts a container); the run goes on. Checked under the lock: a pod a
        move is stopping is not a crash."""
        crashed = []
        with self.lock:
            for pod in self.cluster.crashed_pods():
                self.cluster.stop_pod(pod, drain_seconds=0)
                crashed.append(pod)
            if crashed:
                self.cluster.publish()
        for pod in crashed:
            self.event("pod-crashed", pod=pod.name, service=pod.service, node=pod.node)
            self.pods_changed("crash")
            self._restart(pod, self.now())

    def _restart(self, pod: Pod, t: float) -> None:
        ready = self.place_new([pod.service], "restart", prefer=[pod.node])
        if ready:
            self.lineage.root[ready[0].name] = self.lineage.root.get(pod.name, pod.name)  # a restart, not a move
            self.event("restarted", pod=ready[0].name, service=pod.service, node=ready[0].node,
                       seconds=round(self.now() - t, 3))
            self.pods_changed("restart")

    def scale_to(self, targets: dict[str, Callable[[list[Pod]], tuple[int, dict] | None]]) -> list[str]:
        """Scale each service to the count its target gives for its pods (None: no change; with the
        scale event's details): every scale-down first (pods out of the endpoints in Kubernetes'
        ReplicaSet order, ``scale_down_order``), then every new pod in one batch, the services
        interleaved (a batch scheduler such as KubeDSM's sees them together), then the withdrawn
        pods stopped (draining; until then they hold their room). Decided under the lock: a move
        holds it from starting its new pod until the old one is gone, so a count never includes a
        move's two pods (read mid-move, the HPA once scaled down and stopped the move's new pod,
        leaving one replica too few). The services that changed."""
        gone: list[Pod] = []
        grow: dict[str, int] = {}
        with self.lock:
            pods = self.cluster.pods()
            for service, target in targets.items():
                mine = [p for p in pods if p.service == service]
                decided = target(mine)
                if decided is None or decided[0] == len(mine):
                    continue
                want, detail = decided
                self.event("scale", service=service, to=want, current=len(mine), **detail)
                gone += scale_down_order(mine)[:max(0, len(mine) - want)]
                grow[service] = max(0, want - len(mine))
            withdraw(self.cluster, gone)
        new = [s for k in range(max(grow.values(), default=0)) for s, n in grow.items() if k < n]
        try:
            if new:
                self.place_new(new, "scale-up")
        finally:  # a failed scale-up still stops what was withdrawn: it would hold its room to the end
            stop_withdrawn(self.cluster, gone)
        return list(grow)

    def add_moves(self, n: int) -> None:
        self.moves += n

    # -------------------------------------------------------------- the end
    def summary_base(self, started: str, partial: bool) -> dict:
        """The summary's fields every world has: which run, its moves, faults and recovery."""
        sc = self.plan.scenario
        base = {"scenario": sc.name, "policy": self.plan.policy_name, "seed": self.plan.seed,
                "started": started, "partial": partial,
                "duration_s": sc.duration_s, "warmup_s": sc.warmup_s, "pods_at_start": self.pods_at_start,
                "moves": self.moves, "moved_share": round(moved_share(self.lineage), 4),
                "faults": [{k: v for k, v in f.items() if k != "t"} for f in self.fault_log]}
        healed = [f["healed_s"] for f in self.fault_log if "healed_s" in f]  # faults whose pods were placed again
        base["recovery_s"] = max(healed) if healed and all(h is not None for h in healed) else None
        base["scale_events"] = sum(1 for e in self.out.events if e["kind"] == "scale")
        # the policy is user code: what it failed to do is part of the result, not a silent idle
        base["policy_errors"] = sum(1 for e in self.out.events if e["kind"] == "policy-error")
        base["plan_timeouts"] = sum(1 for e in self.out.events if e["kind"] == "plan-timeout")
        return base

    def request_stats(self, t_end: float) -> tuple[dict, object | None]:
        """The request log's summary over the run's window (``summary.request_stats``)."""
        sc = self.plan.scenario
        return summ.request_stats(self.out.path, self.out.t0, t_end, sc.warmup_s, sc.threshold_ms, self.out.events)

    def placement_metrics(self, t_end: float) -> dict:
        out = pm.run_metrics(self.out.placements, self.out.events, pm.nodes_of(self.plan.state.nodes),
                             pm.requests_of(self.plan.app), self.out.t0, t_end)
        # a family's objective of the placement the run ends with (paper 003's), when the app is its problem
        for extra in extras.extras():
            if (score := extra.score(self.view.view()[0], self.plan.gap_time_limit_s)) is not None:
                out[extra.key] = score
        return out

    def undo_all(self) -> None:
        """Leave the testbed as the run found it: no pods, and every fault undone (nodes up, RTTs as
        configured), latest first. Every step runs, whatever the one before met."""
        try:
            undeploy(self.cluster)
            self.cluster.stop_strays()  # a load generator that would not stop
        except Exception as exc:
            self._note_cleanup_error("undeploy", str(exc)[:200])
        for undo in reversed(self.undo):
            try:
                undo()
            except Exception as exc:
                self._note_cleanup_error("undo a fault", f"{type(exc).__name__}: {exc}"[:200])
        self.out.close()

    def _note_cleanup_error(self, step: str, error: str) -> None:
        try:
            self.event("cleanup-error", step=step, error=error)
        except OutputError:
            pass  # the disk is full: the run already fails with that; the clean-up goes on


class _Injection:
    """The FaultContext one injection gets: it records what should follow; the run does it."""

    def __init__(self, run: RunBase):
        self.cluster, self._run = run.cluster, run
        self.lost: list[Pod] | None = None
        self.relearn = False

    def heal(self, lost: list[Pod]) -> None:
        self.lost = list(lost)

    def relearn_topology(self) -> None:
        self.relearn = True

    def on_cleanup(self, undo: Callable[[], None]) -> None:
        self._run.undo.append(undo)

    def slow_node(self, node: str, factor: float, for_s: float) -> None:
        """A simulated run only: the node's pods run ``factor`` times slower for ``for_s`` seconds."""
        self._run.slow_node(node, factor, for_s)


def _load_now(sc: Scenario, t_run: float, modes: tuple[str, ...]) -> float | None:
    """The scenario's loads summed at ``t_run`` (each its latest step's value) when every load is of
    one of ``modes``; None otherwise."""
    if any(load.mode not in modes for load in sc.loads()):
        return None
    return sum(load.value_at(t_run) for load in sc.loads())


def open_rate(sc: Scenario, t_run: float) -> float | None:
    """Requests per second the scenario sends at ``t_run`` when every load is open or periodic
    (a known rate: the queueing model can predict); None for closed loops and traces."""
    return _load_now(sc, t_run, ("open", "periodic"))


def closed_users(sc: Scenario, t_run: float) -> int | None:
    """Closed-loop users the scenario runs at ``t_run`` when every load is a closed loop (what the
    queueing model's closed form takes); None otherwise."""
    users = _load_now(sc, t_run, ("closed",))
    return None if users is None else int(users)


def time_weighted_users(steps, warmup_s: float, span: float) -> float:
    """Mean scheduled users of a closed loop's steps over [warm-up, span]."""
    t0, total = warmup_s, 0.0
    for i, s in enumerate(steps):
        a = max(s.at_s, t0)
        b = min(steps[i + 1].at_s if i + 1 < len(steps) else span, span)
        if b > a:
            total += s.value * (b - a)
    return round(total / max(1e-9, span - t0), 4)
