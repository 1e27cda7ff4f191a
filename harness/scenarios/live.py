"""One live run of a scenario with one policy on the testbed: the scenario's elements
(``harness.scenarios.elements``) each driven in its own thread on the wall clock, the load
generators, the metrics pull, the display, and the run directory written as it goes. What a run
does, in either world, is ``harness.scenarios.run.RunBase``."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from harness.errors import OutputError, TestbedError
from harness.events import HOST_SPEED
from harness.interrupts import cleanup_shield
from harness.loadgen import NO_ENDPOINT, NO_ENDPOINT_PAUSE_S
from harness.loadgen.process import LoadGenerator, RequestTail
from harness.metrics import Metrics
from harness.results import summary as summ
from harness.results.rundir import TOTALS, RunDir, merge_request_logs
from harness.scenarios.run import Driver, Plan, RunBase, time_weighted_users
from harness.testbed.cluster import Cluster
from harness.testbed.speed import host_reference_ms

SCRAPE_SETTLE_S = 1.5  # Prometheus scrapes the cells every second: wait for the last requests to be in


@dataclass
class Live:
    """What the display shows; updated by the main loop."""

    policy: str
    seed: int
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
    recent: list[float] = field(default_factory=list, repr=False)  # send times of the last seconds' requests
    latencies: list[float] = field(default_factory=list, repr=False)  # OK requests' after the warm-up

    def see(self, rows: list[list[str]], t0: float, warmup_s: float, now: float) -> None:
        """New request log rows (``t_send, latency_ms, status, bytes, error, ...``) into the counts,
        the requests per second over the last 5 s and the percentiles after the warm-up."""
        for row in rows:
            try:
                t, ms, ok = float(row[0]), float(row[1]), summ.is_ok(row[2], row[4] if len(row) > 4 else "")
            except (ValueError, IndexError):
                continue
            self.recent.append(t)
            self.requests += 1
            self.errors += not ok
            if ok and t >= t0 + warmup_s:
                self.latencies.append(ms)
        self.recent = [t for t in self.recent if t >= now - 5]
        self.elapsed_s, self.rps = now - t0, len(self.recent) / 5.0
        if self.latencies:
            self.p50_ms, self.p95_ms = (float(x) for x in np.percentile(self.latencies, [50, 95]))


def sample_host(out: RunDir, host_ms: list[float]) -> None:
    """One sample of the host's speed into ``host_ms`` (the summary's) and as an event (its time:
    for a replay that follows the host's drift, sim.trace_replay)."""
    ms = host_reference_ms()
    host_ms.append(ms)
    out.event(HOST_SPEED, cpu_ms=round(ms, 3))  # not in the live view's events: one every pull


class LiveRun(RunBase):
    def __init__(self, cluster: Cluster, plan: Plan, out: RunDir, on_tick: Callable[[Live], None] | None = None):
        super().__init__(cluster, plan, out)
        self.on_tick = on_tick or (lambda live: None)
        self.live = Live(plan.policy_name, plan.seed, plan.scenario.duration_s)
        self.threads: list[threading.Thread] = []
        self.host_ms: list[float] = []

    # -------------------------------------------------------------- the world's part
    def now(self) -> float:
        return time.time()

    def spawn(self, fn: Callable[[], None], name: str) -> None:
        th = threading.Thread(target=self.guarded(fn, name), name=name, daemon=True)
        th.start()
        self.threads.append(th)

    def drive(self, driver: Driver, name: str) -> None:
        """A scenario element in its own thread: it acts, then sleeps as long as it asks."""
        def loop():
            for wait in driver:
                if self.stop.wait(wait):
                    return
        self.spawn(loop, name)

    def on_event(self, row: dict) -> None:
        detail = row["detail"]
        short = ", ".join(f"{k}={v}" for k, v in detail.items() if k in ("pod", "nodes", "target", "service", "to", "seconds"))
        when = f"{row['t_run']:7.1f}s" if row["t_run"] is not None else "  start "
        self.live.events = (self.live.events + [f"{when} {row['kind']} {short}"])[-6:]

    def add_moves(self, n: int) -> None:
        super().add_moves(n)
        self.live.moves = self.moves

    def pod_cpu(self, window: str) -> dict[str, float]:
        """Each pod's CPU over ``window`` from Prometheus, in the node's logical cores (what the
        requests are written in)."""
        real = Metrics(self.plan.state.prometheus_url).pod_cpu_cores(window)
        return {p.name: real[p.name] * self.cluster.cpu_scale(p.node) for p in self.cluster.pods() if p.name in real}

    # -------------------------------------------------------------- the testbed's measurements
    def metrics_loop(self, period: float = 5.0) -> None:
        metrics = Metrics(self.plan.state.prometheus_url)
        while not self.stop.wait(period):
            self.pull_metrics(metrics)
            self.sample_host()

    def sample_host(self) -> None:
        sample_host(self.out, self.host_ms)

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
                seed = self.plan.seed + 1000 * k  # each load its own draw of the run's seed
                entry = self.plan.app.resolve_entry(spec.entry)
                loads.append(LoadGenerator(self.cluster, spec.client or self.client_node(), entry, spec, sc.duration_s,
                                           self.out.request_file(k), seed, self.out.path / f"loadgen{suffix}.log"))
            # the millisecond the files record, so that the summary and the logs agree on the window
            self.start_load(round(min(load.start() for load in loads), 3))
            self.spawn(self.metrics_loop, "metrics")
            self.timeline(loads)
            partial = False
        except KeyboardInterrupt:
            try:  # Ctrl-C, SIGTERM or SIGHUP: said in the run's own record, then cleaned up as ever
                self.event("interrupted", by="signal", t_run=round(self.t_run(), 3))
            except Exception:
                pass
            raise
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
                    if loads:
                        self.keep_series(started)
                finally:
                    self.cleanup()
        self.out.check()  # a write that failed late (the logs' last rows) still fails the run
        return summary

    def keep_series(self, started: float) -> None:
        """Prometheus's series of the run into the run directory: its data goes with the testbed.
        Prometheus busy or gone: the run stands without them (said as an event)."""
        try:
            series = Metrics(self.plan.state.prometheus_url).series(started, time.time())
        except Exception as exc:  # a query: no reason to fail a finished run
            self.event("series-not-kept", why=f"{type(exc).__name__}: {exc}"[:200])
            return
        self.out.prometheus(series)

    def timeline(self, loads: list[LoadGenerator]) -> None:
        """The main thread while the elements act: the display from the request logs, the load
        generators watched, until the scenario's end."""
        sc = self.plan.scenario
        tails = [RequestTail(load.out) for load in loads]
        while True:
            now = time.time()
            elapsed = now - self.out.t0
            self.live.see([r for tail in tails for r in tail.read()], self.out.t0, sc.warmup_s, now)
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
        base = self.summary_base(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)), partial)
        self.sample_host()
        # CPU ms of a fixed job at the start, every metrics pull and the end: the host's drift, seen
        base["host_reference_ms"] = [round(x, 3) for x in self.host_ms]
        stats, req = self.request_stats(t_end)
        base.update(stats)
        base["metrics"] = self.placement_metrics(t_end)
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
            if users and req is not None and "requests" in stats:
                base["loadgen"]["efficiency"] = summ.generator_busy_share(
                    req, self.out.t0, t_end, sc.warmup_s, users, NO_ENDPOINT_PAUSE_S, NO_ENDPOINT)
        self.out.summary(base)
        return base

    def cleanup(self) -> None:
        self.undo_all()
