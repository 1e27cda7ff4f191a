"""One live run of a scenario with one policy: deploy, load, faults, self-healing, autoscaling,
rescheduling, and the run directory written as it goes.

Threads: the main one plays the timeline (load, faults, crash watch, display); one each for
the rescheduler, the autoscaler and the metrics pull. Every change of pods holds ``lock``, so
a move, a self-healing placement and a scale-up never decide on a stale view of each other.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from harness import faults
from harness.autoscaler import HPA
from harness.errors import OutputError, TestbedError
from harness.events import HOST_SPEED
from harness.interrupts import cleanup_shield
from harness.loadgen import NO_ENDPOINT, NO_ENDPOINT_PAUSE_S
from harness.loadgen.process import LoadGenerator, RequestTail
from harness.metrics import Metrics
from harness.policies import placer_for
from harness.policies.contract import Policy
from harness.rescheduler.live import Lineage, LiveView, initial_placement, moved_share, place_new, reschedule
from harness.rescheduler.loop import CycleGuard
from harness.results import placement_metrics as pm
from harness.results import summary as summ
from harness.results.rundir import TOTALS, RunDir, merge_request_logs
from harness.spec.app import App
from harness.spec.profile import Profile
from harness.spec.scenario import FaultParams, Scenario
from harness.spec.testbed_state import TestbedState
from harness.testbed.cluster import Cluster
from harness.testbed.pods import Pod, deploy, stop_withdrawn, undeploy, withdraw
from harness.testbed.speed import host_reference_ms


SCRAPE_SETTLE_S = 1.5  # Prometheus scrapes the cells every second: wait for the last requests to be in


@dataclass
class Plan:
    scenario: Scenario
    app: App  # replicas already as the scenario asks
    profile: Profile
    state: TestbedState
    policy_name: str
    policy: Policy
    seed: int | None = None
    repeat: int = 1


@dataclass
class Live:
    """What the display shows; updated by the main loop."""

    policy: str
    repeat: int
    duration_s: float
    elapsed_s: float = 0.0
    requests: int = 0
    errors: int = 0
    rps: float = 0.0
    p50_ms: float | None = None
    p95_ms: float | None = None
    moves: int = 0
    pods: int = 0
    events: list[str] = field(default_factory=list)


def hpa_target(d) -> tuple[int, dict] | None:
    """The HPA's decision as scale_to's target."""
    return None if d is None else (d.desired, {"utilisation": round(d.utilisation, 3)})


class LiveRun:
    def __init__(self, cluster: Cluster, plan: Plan, out: RunDir, on_tick: Callable[[Live], None] | None = None):
        self.cluster, self.plan, self.out = cluster, plan, out
        self.on_tick = on_tick or (lambda live: None)
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.lineage = Lineage()
        self.view = LiveView(plan.app, plan.profile, plan.state, cluster, load=self.offered_load)
        self.placer = placer_for(plan.policy)
        self.live = Live(plan.policy_name, plan.repeat, plan.scenario.duration_s)
        self.undo: list[Callable[[], None]] = []  # what faults left to undo at clean-up, oldest first
        self.fault_log: list[dict] = []
        self.moves = 0
        self.pods_at_start = 0
        self.threads: list[threading.Thread] = []
        self.host_ms: list[float] = []
        self.healing: set[float] = set()  # faults whose self-healing is under way; the rescheduler waits

    def offered_load(self) -> tuple[float | None, int | None]:
        """(requests/s, closed-loop users) the scenario offers the app now, each None unless every
        load is of that kind; (None, None) before the load starts."""
        if self.out.t0 is None:
            return None, None
        t_run = time.time() - self.out.t0
        return open_rate(self.plan.scenario, t_run), closed_users(self.plan.scenario, t_run)

    # -------------------------------------------------------------- events
    def event(self, kind: str, t: float | None = None, **detail) -> None:
        row = self.out.event(kind, t=t, **detail)
        short = ", ".join(f"{k}={v}" for k, v in detail.items() if k in ("pod", "nodes", "target", "service", "to", "seconds"))
        when = f"{row['t_run']:7.1f}s" if row["t_run"] is not None else "  start "
        self.live.events = (self.live.events + [f"{when} {kind} {short}"])[-6:]
        if kind == "move":  # every placement held gets its own interval (sim vs real in the report)
            self.record_placement("move")

    def record_placement(self, reason: str) -> None:
        t_run = 0.0 if self.out.t0 is None else time.time() - self.out.t0
        sc = self.plan.scenario
        self.out.placement(self.view.placement(), self.view.predicted(open_rate(sc, t_run), closed_users(sc, t_run)),
                           reason)

    # -------------------------------------------------------------- phases
    def deploy(self) -> None:
        sc = self.plan.scenario
        replicas = {s: spec.replicas for s, spec in self.plan.app.services.items()}
        placement = initial_placement(self.placer, self.view, replicas)
        pods = deploy(self.cluster, self.plan.app, placement)
        for p in pods:
            self.lineage.add(p)
        self.pods_at_start = len(pods)
        self.event("deploy", placement=placement, placed_by=self.placer.name, scenario=sc.name)
        self.record_placement("deploy")

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
        ready = place_new(self.placer, self.view, [p.service for p in lost], self.lock, self.event, self.lineage, label)
        took = time.time() - t_fault
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
        """Do the fault through its kind's plug-in, write its event, then what follows it."""
        t = time.time()
        ctx = _Injection(self)
        detail, window = faults.inject(ctx, fault)
        entry = {"kind": fault.kind, "t": t, "scheduled_s": fault.at_s, "actual_s": round(t - self.out.t0, 3),
                 "late_s": round(t - scheduled, 3)}
        if ctx.lost is not None:
            self.healing.add(t)  # before the heal thread starts: no new move may slip in between
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
            for pod in self.cluster.pods():
                if not self.cluster.pod_alive(pod) and self.cluster.node_up(pod.node):
                    self.cluster.stop_pod(pod, drain_seconds=0)
                    crashed.append(pod)
            if crashed:
                self.cluster.publish()
        for pod in crashed:
            self.event("pod-crashed", pod=pod.name, service=pod.service, node=pod.node)
            self._restart(pod, time.time())

    def crash_loop(self) -> None:
        while not self.stop.wait(1.0):
            self.watch_crashes()

    def _restart(self, pod: Pod, t: float) -> None:
        ready = place_new(self.placer, self.view, [pod.service], self.lock, self.event, self.lineage, "restart",
                          prefer=[pod.node])
        if ready:
            self.lineage.root[ready[0].name] = self.lineage.root.get(pod.name, pod.name)  # a restart, not a move
            self.event("restarted", pod=ready[0].name, service=pod.service, node=ready[0].node,
                       seconds=round(time.time() - t, 3))

    # -------------------------------------------------------------- background loops
    def spawn(self, fn: Callable[[], None], name: str) -> None:
        def guarded():
            try:
                fn()
            except OutputError:
                self.stop.set()  # the results cannot be kept: the main loop sees out.failed and stops the run
            except Exception as exc:  # a failing helper must not kill the run; it is an event
                try:
                    self.event("error", where=name, error=f"{type(exc).__name__}: {exc}"[:300])
                except OutputError:
                    self.stop.set()
        th = threading.Thread(target=guarded, name=name, daemon=True)
        th.start()
        self.threads.append(th)

    def rescheduler_loop(self) -> None:
        rs = self.plan.scenario.rescheduler
        guard = CycleGuard()
        if self.stop.wait(rs.start_s):
            return
        while not self.stop.is_set():
            if self.healing:
                if self.stop.wait(0.5):
                    return
                continue
            n = reschedule(self.plan.policy, self.view, self.lock, rs.max_moves, self.event, self.lineage,
                           lambda: self.stop.is_set() or bool(self.healing), guard).moves
            if n:
                self.moves += n
                self.live.moves = self.moves
            if self.stop.wait(rs.period_s):
                return

    def autoscaler_loop(self) -> None:
        cfg = self.plan.scenario.autoscaling
        hpa, metrics = HPA(cfg, self.plan.app), Metrics(self.plan.state.prometheus_url)
        scale = {n.name: self.cluster.cpu_scale(n.name) for n in self.cluster.nodes}
        while not self.stop.wait(cfg.period_s):
            try:
                real = metrics.pod_cpu_cores(cfg.window)
            except Exception as exc:
                self.event("autoscaler-error", error=str(exc)[:200])
                continue
            pods = self.cluster.pods()
            # in the cores the requests are written in (the node's logical cores)
            cpu = {p.name: real[p.name] * scale[p.node] for p in pods if p.name in real}
            for service in self.plan.app.services:
                if self.scale_to(service, lambda mine, s=service: hpa_target(hpa.desired(s, mine, cpu))):
                    self.record_placement("scale")

    def scale_to(self, service: str, target: Callable[[list[Pod]], tuple[int, dict] | None]) -> bool:
        """Scale ``service`` to the count ``target(its pods)`` gives (None: no change; with the scale
        event's details): new pods where the placer says, or the newest ones stopped (draining).
        Decided under the lock: a move holds it from starting its new pod until the old one is gone,
        so the count never includes a move's two pods (read mid-move, the HPA scaled down and
        stopped the move's new pod, leaving one replica too few). Whether anything changed."""
        with self.lock:
            mine = [p for p in self.cluster.pods() if p.service == service]
            decided = target(mine)
            if decided is None or decided[0] == len(mine):
                return False
            want, detail = decided
            self.event("scale", service=service, to=want, current=len(mine), **detail)
            gone = mine[want:][::-1]
            withdraw(self.cluster, gone)
        if want > len(mine):
            place_new(self.placer, self.view, [service] * (want - len(mine)), self.lock, self.event, self.lineage,
                      "scale-up")
        stop_withdrawn(self.cluster, gone)
        return True

    def request_stream_loop(self) -> None:
        """Deployment requests: Poisson arrivals of R pods each, all placed or the request rejected,
        each leaving after its exponential lifetime."""
        rs = self.plan.scenario.request_stream
        rng = np.random.default_rng(self.plan.seed)
        t = rs.start_s + rng.exponential(1 / rs.rate_per_s)
        leaving: list[tuple[float, int, list[Pod]]] = []  # (when, request, its pods)
        k = 0
        while not self.stop.is_set():
            now = time.time() - self.out.t0
            if leaving and leaving[0][0] <= now:
                _, req, pods = leaving.pop(0)
                with self.lock:
                    withdraw(self.cluster, pods)
                stop_withdrawn(self.cluster, pods)
                self.event("request-departure", request=req, pods=[p.name for p in pods])
                self.record_placement("request-departure")
                continue
            if t <= now:
                k += 1
                r = int(rng.integers(rs.replicas[0], rs.replicas[1] + 1))
                lifetime = float(rng.exponential(rs.mean_lifetime_s))
                with self.lock:
                    view, _ = self.view.view()
                    nodes = self.placer.place(view, [view.pending(rs.service, f"r{k}#{i}") for i in range(r)])
                if any(n is None for n in nodes):
                    self.event("request-rejected", request=k, service=rs.service, replicas=r)
                else:
                    pods = place_new(self.placer, self.view, [rs.service] * r, self.lock, self.event, self.lineage,
                                     "request", prefer=nodes)
                    self.event("request-arrival", request=k, service=rs.service, replicas=r, nodes=nodes,
                               lifetime_s=round(lifetime, 3))
                    self.record_placement("request-arrival")
                    leaving.append((now + lifetime, k, pods))
                    leaving.sort(key=lambda x: x[0])
                t += rng.exponential(1 / rs.rate_per_s)
                continue
            wake = min([t] + [w for w, _, _ in leaving[:1]]) - now
            if self.stop.wait(max(0.01, min(wake, 0.5))):
                return

    def schedule_loop(self) -> None:
        """The replica schedule: cycle k's counts at k x cycle_s, on time (late_s says by how much not)."""
        sched = self.plan.scenario.replica_schedule
        for k, cycle in enumerate(sched.cycles):
            due = self.out.t0 + k * sched.cycle_s
            if k and self.stop.wait(max(0.0, due - time.time())):
                return
            late = round(time.time() - due, 3)
            self.event("replica-cycle", cycle=k, replicas=cycle, late_s=late)
            for service, want in cycle.items():
                self.scale_to(service, lambda mine, n=want: (n, {"reason": "schedule"}))
            self.record_placement(f"cycle {k}")

    def metrics_loop(self, period: float = 5.0) -> None:
        metrics = Metrics(self.plan.state.prometheus_url)
        while not self.stop.wait(period):
            self.pull_metrics(metrics)
            self.sample_host()

    def sample_host(self) -> None:
        """One sample of the host's speed, kept for the summary and as an event (its time: for a
        replay that follows the host's drift, sim.trace_replay)."""
        ms = host_reference_ms()
        self.host_ms.append(ms)
        self.out.event(HOST_SPEED, cpu_ms=round(ms, 3))  # not in the live view's events: one every pull

    def pull_metrics(self, metrics: Metrics) -> None:
        """One row per pod in metrics.csv: its CPU, requests/s and running time totals."""
        try:
            cpu, rps, totals = metrics.pod_cpu_cores(), metrics.pod_requests_per_second(), metrics.pod_time_totals()
        except Exception:
            return  # Prometheus busy: the next pull covers it
        nan = float("nan")
        rows = [(p.name, p.service, p.node, round(cpu.get(p.name, nan), 4), round(rps.get(p.name, nan), 3),
                 *(round(totals.get(p.name, {}).get(k, nan), 3) for k in TOTALS))
                for p in self.cluster.pods()]
        self.out.metrics(rows)

    # -------------------------------------------------------------- the run
    def run(self) -> dict:
        sc = self.plan.scenario
        started = time.time()
        partial = True
        loads: list[LoadGenerator] = []
        self.sample_host()  # the host's speed as the run starts (it drifts: testbed.speed)
        try:
            self.deploy()
            for k, spec in enumerate(sc.loads()):
                suffix = "" if k == 0 else f".{k}"  # requests.csv, requests.1.csv, ...: one file per load
                seed = None if self.plan.seed is None else self.plan.seed + 1000 * k
                entry = self.plan.app.resolve_entry(spec.entry)
                loads.append(LoadGenerator(self.cluster, spec.client or self.client_node(), entry, spec, sc.duration_s,
                                           self.out.request_file(k), seed, self.out.path / f"loadgen{suffix}.log"))
            # the millisecond the files record, so that the summary and the logs agree on the window
            self.out.t0 = round(min(load.start() for load in loads), 3)
            self.event("load-start", t=self.out.t0, loads=[
                {"mode": spec.mode, "entry": self.plan.app.resolve_entry(spec.entry),
                 "steps": [s.model_dump() for s in spec.steps], "trace_events": len(spec.trace)} for spec in sc.loads()])
            self.spawn(self.rescheduler_loop, "rescheduler")
            self.spawn(self.metrics_loop, "metrics")
            self.spawn(self.crash_loop, "crash-watch")
            if sc.autoscaling.enabled:
                self.spawn(self.autoscaler_loop, "autoscaler")
            if sc.replica_schedule is not None:
                self.spawn(self.schedule_loop, "replica-schedule")
            if sc.request_stream is not None:
                self.spawn(self.request_stream_loop, "request-stream")
            self.timeline(loads)
            partial = False
        finally:
            # whatever ended the run (its end, an error, Ctrl-C, a full disk): the load stops, the
            # summary is written where the disk allows, and the testbed is cleaned, with no Ctrl-C
            # able to skip a step
            with cleanup_shield("stopping the run and cleaning up the testbed"):
                self.stop.set()
                for load in loads:
                    load.stop()
                try:
                    merge_request_logs(self.out.path)
                    for th in self.threads:
                        th.join(timeout=30)
                    if loads:  # the counters as the load ended: the last interval's per-service times
                        time.sleep(SCRAPE_SETTLE_S)
                        self.pull_metrics(Metrics(self.plan.state.prometheus_url))
                    summary = self.summarize(loads, started, partial)
                finally:
                    self.cleanup()
        self.out.check()  # a write that failed late (the logs' last rows) still fails the run
        return summary

    def timeline(self, loads: list[LoadGenerator]) -> None:
        sc = self.plan.scenario
        due = sorted(sc.faults, key=lambda f: f.at_s)
        tails = [RequestTail(load.out) for load in loads]
        recent: list[tuple[float, float, bool]] = []  # (t_send, latency_ms, ok)
        rate, users = open_rate(sc, 0.0), closed_users(sc, 0.0)
        lat: list[float] = []
        while True:
            now = time.time()
            elapsed = now - self.out.t0
            while due and elapsed >= due[0].at_s:
                f = due.pop(0)
                self.inject(f, self.out.t0 + f.at_s)
            if rate is not None and open_rate(sc, elapsed) != rate:  # a new rate: a new queueing prediction
                rate = open_rate(sc, elapsed)
                self.record_placement("rate")
            if users is not None and closed_users(sc, elapsed) != users:  # so are new users
                users = closed_users(sc, elapsed)
                self.record_placement("users")
            for row in (r for tail in tails for r in tail.read()):
                try:
                    t, ms, ok = float(row[0]), float(row[1]), summ.is_ok(row[2], row[4] if len(row) > 4 else "")
                except (ValueError, IndexError):
                    continue
                recent.append((t, ms, ok))
                self.live.requests += 1
                self.live.errors += not ok
                if ok and t >= self.out.t0 + sc.warmup_s:
                    lat.append(ms)
            recent = [r for r in recent if r[0] >= now - 10]
            self.live.elapsed_s = elapsed
            self.live.rps = sum(1 for r in recent if r[0] >= now - 5) / 5.0
            if lat:
                self.live.p50_ms, self.live.p95_ms = (float(x) for x in np.percentile(lat, [50, 95]))
            self.live.pods = len(self.cluster.pods())
            self.on_tick(self.live)
            for load in loads:
                load.sample_cpu()
            self.out.check()
            for load in loads:
                if (why := load.write_failure()) is not None:
                    raise OutputError(why)
            stopped = [load for load in loads if not load.running()]
            if elapsed >= sc.duration_s + 1 or stopped:
                if stopped and elapsed < sc.duration_s:
                    self.event("loadgen-exited", code=stopped[0].proc.poll() if stopped[0].proc else None)
                return
            time.sleep(0.2)

    def client_node(self) -> str:
        for n in self.cluster.nodes:
            if n.role == "client" and self.cluster.node_up(n.name):
                return n.name
        raise TestbedError("the testbed has no client node up to run the load generator on")

    def summarize(self, loads: list[LoadGenerator], started: float, partial: bool) -> dict:
        sc = self.plan.scenario
        if self.out.t0 is None:  # stopped before the load began
            self.out.t0 = time.time()
            loads = []
        t_end = min(time.time(), self.out.t0 + sc.duration_s)
        base = {"scenario": sc.name, "policy": self.plan.policy_name, "repeat": self.plan.repeat, "seed": self.plan.seed,
                "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)), "partial": partial,
                "duration_s": sc.duration_s, "warmup_s": sc.warmup_s, "pods_at_start": self.pods_at_start,
                "moves": self.moves, "moved_share": round(moved_share(self.lineage), 4),
                "faults": [{k: v for k, v in f.items() if k != "t"} for f in self.fault_log]}
        healed = [f["healed_s"] for f in self.fault_log if "healed_s" in f]  # faults whose pods were placed again
        base["recovery_s"] = max(healed) if healed and all(h is not None for h in healed) else None
        base["scale_events"] = sum(1 for e in self.out.events if e["kind"] == "scale")
        self.sample_host()
        # CPU ms of a fixed job at the start, every metrics pull and the end: the host's drift, seen
        base["host_reference_ms"] = [round(x, 3) for x in self.host_ms]
        try:
            req = summ.read_requests(self.out.path)
            stats = summ.summarize(req, self.out.t0, t_end, sc.warmup_s, sc.threshold_ms)
            stats["steady_state_errors"] = summ.errors_outside(req, self.out.events, self.out.t0, t_end, sc.warmup_s)
            if req.entry.nunique() > 1:  # several entries: each one's latency apart
                stats["entries"] = {e: summ.summarize(g, self.out.t0, t_end, sc.warmup_s, sc.threshold_ms)
                                    for e, g in req.groupby("entry")}
        except (FileNotFoundError, ValueError, KeyError) as exc:
            stats = {"error": f"no request log: {exc}"}
        base.update(stats)
        base["metrics"] = pm.run_metrics(self.out.placements, self.out.events, pm.nodes_of(self.plan.state.nodes),
                                         pm.requests_of(self.plan.app), self.out.t0, t_end)
        if loads:
            run_s = max(1e-9, t_end - self.out.t0)
            closed = all(spec.mode == "closed" for spec in sc.loads())
            users = sum(time_weighted_users(spec.steps, sc.warmup_s, t_end - self.out.t0) for spec in sc.loads()) \
                if closed else None
            mean = stats.get("mean_ms")
            cpu = sum(load.cpu_seconds for load in loads)
            base["loadgen"] = {"cpu_seconds": round(cpu, 3), "cpu_share": round(cpu / run_s, 4),
                               "mode": "+".join(spec.mode for spec in sc.loads()), "users_mean": users,
                               # Little's law: with no think time a closed loop of U users can send at most
                               # U / latency requests a second
                               "littles_law_rps": round(users * 1000 / mean, 3) if users and mean else None}
            if users and "requests" in stats:
                base["loadgen"]["efficiency"] = summ.generator_busy_share(
                    req, self.out.t0, t_end, sc.warmup_s, users, NO_ENDPOINT_PAUSE_S, NO_ENDPOINT)
        self.out.summary(base)
        return base

    def cleanup(self) -> None:
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

    def __init__(self, run: LiveRun):
        self.cluster, self._run = run.cluster, run
        self.lost: list[Pod] | None = None
        self.relearn = False

    def heal(self, lost: list[Pod]) -> None:
        self.lost = list(lost)

    def relearn_topology(self) -> None:
        self.relearn = True

    def on_cleanup(self, undo: Callable[[], None]) -> None:
        self._run.undo.append(undo)


def _load_now(sc: Scenario, t_run: float, modes: tuple[str, ...]) -> float | None:
    """The scenario's loads summed at ``t_run`` (each its latest step's value) when every load is of
    one of ``modes``; None otherwise."""
    if any(load.mode not in modes for load in sc.loads()):
        return None
    return sum(next(s.value for s in reversed(load.steps) if s.at_s <= max(0.0, t_run)) for load in sc.loads())


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
