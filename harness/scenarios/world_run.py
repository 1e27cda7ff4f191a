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
from pathlib import Path
from typing import Callable, Protocol

from harness.errors import OutputError
from harness.interrupts import cleanup_shield
from harness.loadgen.process import LoadProcess, RequestTail
from harness.results import summary as summ
from harness.results.rundir import RunDir
from harness.scenarios.live import Live, sample_host
from harness.testbed.cluster import Cluster


class Play(Protocol):
    """One policy's decision in a world, played on a testbed."""

    drain_s: float  # after the load's end, how long its last requests may take before they count as unfinished
    model_file: Path | None  # a learned policy's model (its path and SHA-256 go into the run's inputs)

    def placement(self) -> dict[str, list[str]]:
        """What runs where, as the deploy event says it: service -> [node, ...], one per instance."""

    def deploy(self, cluster: Cluster, folder: Path, seed: int) -> None:
        """Start the world's processes on the nodes (their draws seeded by the run's ``seed``);
        return when they serve."""

    def load(self, cluster: Cluster, folder: Path, seed: int, duration_s: float) -> LoadProcess:
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
        self.exited: int | None = None  # the load generator's status when it stopped before the run's end

    def run(self) -> dict:
        started, partial, load = time.time(), True, None
        sample_host(self.out, self.host_ms)
        try:
            self.play.deploy(self.cluster, self.out.path, self.seed)
            self.out.event("deploy", placement=self.play.placement(), placed_by=self.policy_name,
                           scenario=self.scenario.name)
            load = self.play.load(self.cluster, self.out.path, self.seed, self.scenario.duration_s)
            self.out.t0 = round(load.start(), 3)
            self.out.event("load-start", t=self.out.t0, loads=self.play.loads())
            self.timeline(load)
            partial = self.exited is not None
        except KeyboardInterrupt:
            self._event("interrupted", by="signal", t_run=round(time.time() - (self.out.t0 or time.time()), 3))
            raise
        finally:
            # whatever ended the run: each step runs, none able to hide what ended it, no Ctrl-C able to skip one
            with cleanup_shield("stopping the run and cleaning up the testbed"):
                self._step("stop the load", lambda: load.stop() if load is not None else None)
                summary = self._step("summarise", lambda: self.summarize(load, started, partial))
                self._step("stop the world's processes", lambda: self.play.stop(self.cluster))
                self._step("stop strays", self.cluster.stop_strays)
                self.out.close()
        self.out.check()
        return summary or {}

    def _event(self, kind: str, **detail) -> None:
        try:
            self.out.event(kind, **detail)
        except OutputError:
            pass  # the disk is full: the run fails with that already

    def _step(self, step: str, fn: Callable[[], object]):
        try:
            return fn()
        except Exception as exc:  # noqa: BLE001 - one clean-up step's failure must not skip the next
            self._event("cleanup-error", step=step, error=f"{type(exc).__name__}: {exc}"[:200])
            return None

    def timeline(self, load: LoadProcess) -> None:
        """The display from the request log until the scenario's end and the last requests' (the
        generator stops by itself), or the generator's early exit."""
        tail = RequestTail(load.out)
        while True:
            now = time.time()
            self.live.see(tail.read(), self.out.t0, self.scenario.warmup_s, now)
            self.on_tick(self.live)
            load.sample_cpu()
            self.out.check()
            if (why := load.write_failure()) is not None:
                raise OutputError(why)
            if not load.running():
                if now - self.out.t0 < self.scenario.duration_s:
                    self.exited = load.proc.poll() if load.proc else None
                    self._event("loadgen-exited", code=self.exited)
                return
            if now - self.out.t0 >= self.scenario.duration_s + self.play.drain_s:
                return  # still waiting: its stop (SIGTERM) marks the requests in flight unfinished
            time.sleep(0.2)

    def summarize(self, load: LoadProcess | None, started: float, partial: bool) -> dict:
        sc = self.scenario
        base = {"scenario": sc.name, "scenario_world": sc.world, "policy": self.policy_name, "seed": self.seed,
                "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)), "partial": partial,
                "duration_s": sc.duration_s, "warmup_s": sc.warmup_s, "moves": 0, "recovery_s": None, "faults": []}
        self._step("sample the host", lambda: sample_host(self.out, self.host_ms))
        base["host_reference_ms"] = [round(x, 3) for x in self.host_ms]
        if self.out.t0 is None or load is None:
            base["error"] = "stopped before the load began"
        else:
            t_end = min(time.time(), self.out.t0 + sc.duration_s)
            stats, req = summ.request_stats(self.out.path, self.out.t0, t_end, sc.warmup_s, sc.threshold_ms,
                                            self.out.events)
            base.update(stats)
            if req is not None:
                base["metrics"] = self.play.metrics(req[summ.in_window(req, self.out.t0, t_end, sc.warmup_s)])
            if self.exited is not None:
                base["error"] = f"the load generator exited with status {self.exited} before the run's end (loadgen.log)"
            base["loadgen"] = {"cpu_seconds": round(load.cpu_seconds, 3), "mode": "open",
                               "cpu_share": round(load.cpu_seconds / max(1e-9, t_end - self.out.t0), 4)}
        self.out.summary(base)
        return base
