"""One live run of a scenario of a family's own world (``harness.scenarios.worlds``: SIL-GPO's
service graph) with one policy's decision: what every live run does — the run directory written
as it goes, the deploy and load-start events, the load generator in a client node watched and
shown, the host's speed sampled, the summary from the request log (``harness.results.summary``),
Ctrl-C and errors leaving a clean testbed — around what the world does itself (a ``Play``: its
processes on the nodes, its load generator, its model's expectation).

A world's decision is not pods and moves: nothing is placed or moved during the run, no faults
are injected (its scenario files have none), and Prometheus's pod series do not apply.
"""

from __future__ import annotations

import time
from typing import Callable, Protocol

import numpy as np

from harness.errors import OutputError
from harness.events import HOST_SPEED
from harness.interrupts import cleanup_shield
from harness.loadgen.process import LoadProcess, RequestTail
from harness.results import summary as summ
from harness.results.rundir import RunDir
from harness.scenarios.live import Live
from harness.testbed.cluster import Cluster
from harness.testbed.speed import host_reference_ms


DRAIN_S = 30.0  # after the load's end, how long its last requests may take before they count as unfinished


class Play(Protocol):
    """One policy's decision in a world, played on a testbed."""

    def placement(self) -> dict[str, list[str]]:
        """What runs where, as the deploy event says it: service -> [node, ...], one per instance."""

    def deploy(self, cluster: Cluster, folder) -> None:
        """Start the world's processes on the nodes; return when they serve."""

    def load(self, cluster: Cluster, folder, seed: int, duration_s: float) -> LoadProcess:
        """The load generator (not started) that writes ``folder/requests.csv``."""

    def loads(self) -> list[dict]:
        """The load-start event's ``loads``: per request type its mode, entry and rate."""

    def metrics(self, requests) -> dict:
        """The world's own measures for the summary (its model's expectation beside the measured)."""

    def stop(self, cluster: Cluster) -> None:
        """Stop every process ``deploy`` started (also after a failed or interrupted deploy)."""


class WorldLiveRun:
    def __init__(self, cluster: Cluster, scenario, policy_name: str, play: Play, seed: int, out: RunDir,
                 on_tick: Callable[[Live], None] | None = None):
        self.cluster, self.scenario, self.policy_name, self.play, self.seed, self.out = \
            cluster, scenario, policy_name, play, seed, out
        self.on_tick = on_tick or (lambda live: None)
        self.live = Live(policy_name, seed, scenario.duration_s)
        self.host_ms: list[float] = []

    def sample_host(self) -> None:
        ms = host_reference_ms()
        self.host_ms.append(ms)
        self.out.event(HOST_SPEED, cpu_ms=round(ms, 3))

    def run(self) -> dict:
        started, partial, load = time.time(), True, None
        self.sample_host()
        try:
            self.play.deploy(self.cluster, self.out.path)
            self.out.event("deploy", placement=self.play.placement(), placed_by=self.policy_name,
                           scenario=self.scenario.name)
            load = self.play.load(self.cluster, self.out.path, self.seed, self.scenario.duration_s)
            self.out.t0 = round(load.start(), 3)
            self.out.event("load-start", t=self.out.t0, loads=self.play.loads())
            self.timeline(load)
            partial = False
        except KeyboardInterrupt:
            try:
                self.out.event("interrupted", by="signal", t_run=round(time.time() - (self.out.t0 or time.time()), 3))
            except Exception:
                pass
            raise
        finally:
            with cleanup_shield("stopping the run and cleaning up the testbed"):
                try:
                    if load is not None:
                        load.stop()
                    summary = self.summarize(load, started, partial)
                finally:
                    try:
                        self.play.stop(self.cluster)
                        self.cluster.stop_strays()
                    except Exception as exc:
                        self.out.event("cleanup-error", step="stop the world's processes", error=str(exc)[:200])
                    self.out.close()
        self.out.check()
        return summary

    def timeline(self, load: LoadProcess) -> None:
        """The display from the request log until the scenario's end or the generator's."""
        tail, lat, recent = RequestTail(load.out), [], []
        while True:
            now = time.time()
            for row in tail.read():
                try:
                    t, ms, ok = float(row[0]), float(row[1]), summ.is_ok(row[2], row[4])
                except (ValueError, IndexError):
                    continue
                recent.append(t)
                self.live.requests += 1
                self.live.errors += not ok
                if ok and t >= self.out.t0 + self.scenario.warmup_s:
                    lat.append(ms)
            recent = [t for t in recent if t >= now - 5]
            self.live.elapsed_s, self.live.rps = now - self.out.t0, len(recent) / 5.0
            if lat:
                self.live.p50_ms, self.live.p95_ms = (float(x) for x in np.percentile(lat, [50, 95]))
            self.on_tick(self.live)
            load.sample_cpu()
            self.out.check()
            if (why := load.write_failure()) is not None:
                raise OutputError(why)
            if not load.running():
                if self.live.elapsed_s < self.scenario.duration_s:
                    self.out.event("loadgen-exited", code=load.proc.poll() if load.proc else None)
                return
            if self.live.elapsed_s >= self.scenario.duration_s + DRAIN_S:
                return  # still waiting: its stop (SIGTERM) marks the requests in flight unfinished
            time.sleep(0.2)

    def summarize(self, load: LoadProcess | None, started: float, partial: bool) -> dict:
        sc = self.scenario
        t0 = self.out.t0 if self.out.t0 is not None else time.time()
        t_end = min(time.time(), t0 + sc.duration_s)
        self.sample_host()
        base = {"scenario": sc.name, "scenario_world": sc.world, "policy": self.policy_name, "seed": self.seed,
                "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)), "partial": partial,
                "duration_s": sc.duration_s, "warmup_s": sc.warmup_s, "moves": 0, "recovery_s": None, "faults": [],
                "host_reference_ms": [round(x, 3) for x in self.host_ms]}
        if self.out.t0 is None or load is None:
            base["error"] = "stopped before the load began"
            self.out.summary(base)
            return base
        try:
            req = summ.read_requests(self.out.path)
            stats = summ.summarize(req, t0, t_end, sc.warmup_s, sc.threshold_ms)
            if req.entry.nunique() > 1:  # each request type (its entry) apart
                stats["entries"] = {e: summ.summarize(g, t0, t_end, sc.warmup_s, sc.threshold_ms)
                                    for e, g in req.groupby("entry")}
            base.update(stats)
            base["metrics"] = self.play.metrics(req[summ.in_window(req, t0, t_end, sc.warmup_s)])
        except (FileNotFoundError, ValueError, KeyError) as exc:
            base["error"] = f"no request log: {exc}"
        base["loadgen"] = {"cpu_seconds": round(load.cpu_seconds, 3),
                           "cpu_share": round(load.cpu_seconds / max(1e-9, t_end - t0), 4), "mode": "open"}
        self.out.summary(base)
        return base
