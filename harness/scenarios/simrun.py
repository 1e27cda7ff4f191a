"""One simulated run of a scenario with one policy: the same run (``harness.scenarios.run.RunBase``)
and the same scenario elements as live, on a simulated cluster (``harness.testbed.simulated``) in
virtual time, writing the same run directory. What the testbed would have measured, the simulator
predicts: every request the scenario's loads would send gets the latency the model gives the
placement held when it was sent —

- open, periodic and trace loads: the requests replayed through the placement's processor-sharing
  nodes (``sim.trace_replay``), so they queue as the node-ps model says; each placement interval is
  replayed apart (a queue does not carry over a change of placement);
- closed loops: each user sends its next request when the last returns or times out, each taking
  REACH's model around the job times the closed network gives the users running
  (``QueueingModel.closed_execution``, mean value analysis; one user: the profile's);
- a request slower than its load's ``timeout_s`` is an error, as live;
- each request draws its own job times, its own route (one replica per service) and, where the
  profile measured the links' spread, its own RTTs (``sim.variability``), from the run's seed
  (``--variability means``: none, every closed-loop request of an interval the same);
- a load's requests take the path of the service they enter at (apps deployed together each
  their own).

With the profile's pod lifecycle (``Profile.lifecycle``, drawn per pod: ``sim.lifecycle``) a pod
serves only once it is ready: deploying, moving (make-before-break: the old pod serves meanwhile),
healing, restarting and scaling up wait for it on the run's clock (``SimCluster.wait_ready``), so a
pod lost or crashed leaves its service a replica short for that long; a deployment request's pods
start beside the stream (``SimStarting``). A request that meets a service without a replica then
fails as live: no published replica of its entry is the load generator's ``no endpoint`` (and its
user pauses), a callee without one the cell's HTTP 500 after the rest of the request's time. Without
a lifecycle pods start at once and such a request counts as timed out, as before.

The run's ``metrics.csv`` is the same model's (``scenarios.sim_metrics``): per pod every 5 s, what
the requests sent gave it.

What the simulated run assumes beyond that, per scenario element and fault kind, is written into
its inputs (``inputs/simulation.json``) and its summary (``assumptions``).
"""

from __future__ import annotations

import copy
import csv
import heapq
import itertools
import json
import sys
import time
from dataclasses import dataclass

import numpy as np

from harness.loadgen import NO_ENDPOINT, NO_ENDPOINT_PAUSE_S, TIMED_OUT
from harness.results.rundir import REQUEST_FIELDS, RunDir, merge_request_logs
from harness.scenarios import elements, sim_metrics
from harness.scenarios.run import Plan, RunBase, closed_users, open_rate
from harness.sim.latency import LatencyModel
from harness.sim.lifecycle import PodClock
from harness.sim.variability import RequestSpread, cv_matrix, link_sd
from harness.testbed.pods import Pod
from harness.testbed.simulated import SimCluster

PROGRESS_S = 5.0  # a simulation that runs longer than this says how far it is, every this often (stderr)
DEPLOY_LEAD_S = 1.0  # the app is deployed this long before the load starts (live: however long it takes)


@dataclass
class Interval:
    """A placement held from ``t_run`` on, with the model that is the truth then (the profile's,
    with the RTTs the run has and any node slowed by a fault), and its serving pods (name, service,
    node)."""

    t_run: float
    X: np.ndarray
    model: LatencyModel
    pods: tuple[tuple[str, str, str], ...] = ()


class Failed(float):
    """A request's latency (ms) when it failed before a reply: its row's ``status`` and ``error``
    are as the live load generator writes them."""

    status: int
    error: str

    def __new__(cls, ms: float, status: int, error: str):
        out = super().__new__(cls, ms)
        out.status, out.error = status, error
        return out


class SimStarting:
    """A deployment request's pods in a simulated run with a pod lifecycle (``StartPlaced``'s part):
    started now on their chosen nodes, their room held and no replicas (``LiveView.starting``)
    until the last is ready on the run's clock, then serving; the stream goes on meanwhile."""

    def __init__(self, run: "SimRun", services: list[str], nodes: list[str], on_ready):
        self.run, self.on_ready, self.done = run, on_ready, False
        self.pods = [run.cluster.start_pod(s, n) for s, n in zip(services, nodes)]
        run.view.starting.update(p.name for p in self.pods)
        self.at = max(run.cluster.ready_at(p) for p in self.pods)

        def ready():
            yield max(0.0, self.at - run.now())
            self.finish(serve=True)
        run.drive(ready(), "start-placed")

    def alive(self) -> list[Pod]:
        now = {p.name for p in self.run.cluster.pods()}
        return [p for p in self.pods if p.name in now]

    def finish(self, serve: bool) -> None:
        """No longer starting: serving (``serve``), or let go before it ever did."""
        if self.done:
            return
        self.done = True
        with self.run.lock:
            self.run.view.starting.difference_update(p.name for p in self.pods)
            for p in self.alive() if serve else []:
                self.run.lineage.add(p)
        if serve and not self.run.stop.is_set():  # the run is over (its stream let go at the end): nothing to record
            self.on_ready()

    def join(self, timeout: float | None = None) -> list[Pod]:
        """The pods: a request that leaves before they are ready takes them away unserved (live,
        its departure waits for them and they serve a moment)."""
        self.finish(serve=self.run.now() >= self.at)
        return self.alive()


class SimRun(RunBase):
    simulated = True

    def __init__(self, cluster: SimCluster, plan: Plan, out: RunDir, t0: float | None = None):
        super().__init__(cluster, plan, out)
        self.T0 = round(time.time() if t0 is None else t0, 3)
        self.clock = self.T0 - DEPLOY_LEAD_S
        cluster.clock = self.now
        self.slowed: list[tuple[str, float, float]] = []  # (node, factor, until t_run)
        self.intervals: list[Interval] = []
        self._queue: list = []
        self._tie = itertools.count()
        # each request's own job times, route and (where measured) RTTs around the profile's means
        # (sim.variability), seeded by the run's seed, each from a stream of its own; "means": none
        drawn = plan.variability != "means"
        profile = plan.profile if drawn else None
        self.job_cv = cv_matrix(self.view.model, profile)
        links = link_sd(self.view.model, profile)
        self.link_sd = links if any(bool((a > 0).any()) for a in links) else None
        self.spread = RequestSpread(self.job_cv, np.random.default_rng([plan.seed or 0, 0x5EED]), links=self.link_sd,
                                    link_rng=np.random.default_rng([plan.seed or 0, 0x5EED, 2]), routes=drawn,
                                    route_rng=np.random.default_rng([plan.seed or 0, 0x5EED, 4]))
        self._draws: dict[tuple, list[float]] = {}  # (interval, closed loops' users, entry): latencies to come
        # each pod's start and stop drawn from the profile's lifecycle (sim.lifecycle); none: at once
        self.pod_clock = PodClock(profile, np.random.default_rng([plan.seed or 0, 0x5EED, 3]))
        cluster.sleep_until = self.sleep_until
        if self.pod_clock.measured:
            types = {n.name: n.type for n in plan.state.nodes}
            cluster.start_s = lambda node: self.pod_clock.ready_s(types[node])
            cluster.stop_s = lambda node: self.pod_clock.gone_s(types[node])

    # -------------------------------------------------------------- the world's part
    def now(self) -> float:
        return self.clock

    def sleep_until(self, t: float) -> None:
        """Wait on the run's clock (a pod getting ready): the element waiting acts on at ``t``; the
        others due meanwhile act when it is done."""
        self.clock = max(self.clock, t)

    def start_placed(self, services: list[str], nodes: list[str], on_ready) -> SimStarting | None:
        """A deployment request's pods: beside the stream with a pod lifecycle; without one None
        (the stream places them at once, as before)."""
        return SimStarting(self, services, nodes, on_ready) if self.pod_clock.measured else None

    def pods_changed(self, reason: str) -> None:
        """A crash taken out, or its replacement serving: a placement of its own when pods take time."""
        if self.pod_clock.measured:
            self.record_placement(reason)

    def spawn(self, fn, name: str) -> None:
        self.guarded(fn, name)()  # nothing runs beside the timeline in virtual time: at once

    def drive(self, driver, name: str, at: float | None = None) -> None:
        heapq.heappush(self._queue, (self.clock if at is None else at, next(self._tie), name, driver))

    def slow_node(self, node: str, factor: float, for_s: float) -> None:
        until = self.t_run() + for_s
        self.slowed.append((node, factor, until))
        self.record_placement("slowdown")

        def ends():
            yield max(0.0, until - self.t_run())
            self.record_placement("slowdown-end")
        self.drive(ends(), "slowdown")

    def truth(self) -> LatencyModel:
        """The model as the testbed is now: the view's (profile and current RTTs) with slowed nodes."""
        model = self.view.model
        slow = [(n, f) for n, f, until in self.slowed if until > self.t_run()]
        if not slow:
            return model
        model = copy.copy(model)
        model.E = model.E.copy()
        for node, factor in slow:
            if node in model.topo.nodes:
                model.E[:, model.topo.nodes.index(node)] *= factor
        return model

    def record_placement(self, reason: str) -> None:
        super().record_placement(reason)
        view, pods = self.view.view()
        self.intervals.append(Interval(self.t_run() if self.out.t0 is not None else -DEPLOY_LEAD_S,
                                       view.counts().copy(), self.truth(),
                                       tuple((name, p.service, p.node) for name, p in pods.items())))

    def pod_cpu(self, window: str) -> dict[str, float]:
        """Each pod's CPU in cores: its arrivals × its execution time (the queueing model's load)."""
        from harness.sim.queueing import QueueingModel

        rate = self.request_rate()
        view, pods = self.view.view()
        X, model = view.counts(), self.truth()
        if not rate or (X.sum(axis=1) == 0).any():
            return {name: 0.0 for name in pods}
        lam = QueueingModel(model).arrivals(X, rate)  # per (service, node), shared by its replicas there
        out = {}
        for name, pod in pods.items():
            s, n = model.index[pod.service], model.topo.nodes.index(pod.node)
            out[name] = float(lam[s, n] / X[s, n] * model.E[s, n] / 1000)
        return out

    def request_rate(self) -> float | None:
        """Requests per second the app gets now: an open rate, or closed-loop users over their latency."""
        sc, t = self.plan.scenario, self.t_run()
        rate = open_rate(sc, t)
        if rate is not None:
            return rate
        users = closed_users(sc, t)
        if users:
            ms = self.closed_ms(self.intervals[-1], users)
            return users * 1000 / ms if ms and np.isfinite(ms) else None
        return None

    @staticmethod
    def closed_ms(interval: Interval, users: int, entry: int | None = None) -> float | None:
        """A closed loop's mean latency in the interval (None: a service has no replica): D_msa,
        or entering at service ``entry`` (an index: apps deployed together each take their own)."""
        from harness.sim.queueing import QueueingModel

        if (interval.X.sum(axis=1) == 0).any():
            return None  # a service without a replica: the request fails
        return QueueingModel(interval.model).closed_latency(interval.X, users, entry)

    # -------------------------------------------------------------- the run
    def progress(self, text) -> None:
        """One line on stderr every PROGRESS_S of wall clock once the run has taken that long
        (``text`` a callable: built only when shown)."""
        now = time.monotonic()
        started = self.__dict__.setdefault("_started", now)
        if now - max(started, self.__dict__.get("_shown", started)) >= PROGRESS_S:
            self._shown = now
            print(f"harness: simulating {self.out.path.name}: {text()} ({now - started:.0f} s)", file=sys.stderr,
                  flush=True)

    def run(self) -> dict:
        sc = self.plan.scenario
        self._started = time.monotonic()
        self.deploy()
        # pods that took time to get ready: the load starts DEPLOY_LEAD_S after the last was
        self.T0 = max(self.T0, round(self.clock + DEPLOY_LEAD_S, 3))
        self.clock = self.T0
        last = self.intervals[-1]
        self.intervals.append(Interval(0.0, last.X, last.model, last.pods))
        self.start_load(self.T0)
        end = self.T0 + sc.duration_s
        while self._queue and self._queue[0][0] <= end:
            at, _, name, driver = heapq.heappop(self._queue)
            self.clock = max(self.clock, at)
            self.progress(lambda: f"{self.clock - self.T0:.0f} of {sc.duration_s:g} s of virtual time")
            try:
                wait = next(driver)
            except StopIteration:
                continue
            except Exception as exc:  # as live: a failing element is an event, the run goes on
                self.event("error", where=name, error=f"{type(exc).__name__}: {exc}"[:300])
                continue
            self.drive(driver, name, at=self.clock + max(0.0, float(wait)))
        self.clock = end
        self.stop.set()
        answered = self.write_requests()
        for t_run, rows in sim_metrics.pulls(self.intervals, answered, self.plan.scenario):
            self.out.metrics(rows, t=self.T0 + t_run)
        summary = self.summarize()
        self.undo_all()
        return summary

    # -------------------------------------------------------------- what the testbed would have measured
    def write_requests(self) -> np.ndarray:
        """Every load's requests into its log; the send times (t_run) of those answered, sorted."""
        sc = self.plan.scenario
        rng = np.random.default_rng(self.plan.seed)
        answered = []
        for k, spec in enumerate(sc.loads()):
            entry = self.plan.app.resolve_entry(spec.entry)
            rows = (self.closed_requests(spec, rng, entry) if spec.mode == "closed"
                    else self.open_requests(spec, rng, k, entry))
            with open(self.out.request_file(k), "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(REQUEST_FIELDS)
                for n, (t, ms) in enumerate(rows):
                    if n % 65536 == 0:
                        self.progress(lambda: f"load {k}: writing request {n:,} of {len(rows):,}")
                    if isinstance(ms, Failed):
                        w.writerow((f"{self.T0 + t:.6f}", f"{ms:.3f}", ms.status, 0, ms.error, "", entry))
                        continue
                    timed_out = ms is None or ms > spec.timeout_s * 1000
                    w.writerow((f"{self.T0 + t:.6f}", f"{(spec.timeout_s * 1000 if timed_out else ms):.3f}",
                                0 if timed_out else 200, 0, TIMED_OUT if timed_out else "",
                                "", entry))
                    if not timed_out:
                        answered.append(t)
        merge_request_logs(self.out.path)
        return np.sort(np.asarray(answered, float))

    def failed(self, interval: Interval, entry: str) -> Failed | None:
        """How a request to ``interval``'s placement fails when a service has no replica, with a pod
        lifecycle (None without one: it counts as timed out, as before): no published replica of
        its entry is the load generator's ``no endpoint`` at once; a callee without one the
        cell's HTTP 500 after the rest of the request's time (the model without that service)."""
        if not self.pod_clock.measured:
            return None
        model = interval.model
        if entry in model.index and interval.X[model.index[entry]].sum() == 0:
            return Failed(0.0, 0, f"RuntimeError: {NO_ENDPOINT}")
        at = self.entry_index(interval, entry) if entry in model.index else None
        rest = model.request_ms(interval.X, model.terms(interval.X, partial=True), at)
        return Failed(float(rest[0]), 500, "CatchResponseError: HTTP 500")

    def interval_at(self, t: float) -> Interval:
        starts = [i.t_run for i in self.intervals]
        return self.intervals[max(0, int(np.searchsorted(starts, t, side="right")) - 1)]

    def closed_requests(self, spec, rng, entry: str) -> list[tuple[float, float | None]]:
        """Closed-loop users: each sends its next request when the last returns (after a failure for
        want of any replica of the entry, ``NO_ENDPOINT_PAUSE_S`` later, as the load generator)."""
        duration = self.plan.scenario.duration_s
        steps = [(s.at_s, int(s.value)) for s in spec.steps]
        rows: list[tuple[float, float | None]] = []
        users_at = lambda t: int(spec.value_at(t))  # noqa: E731
        starts = {u: steps[0][0] for u in range(steps[0][1])}
        for a, v in steps[1:]:
            for u in range(v):
                starts.setdefault(u, a)
        for u, t in starts.items():
            self.progress(lambda: f"closed load: user {u + 1} of {len(starts)}, {len(rows):,} requests")
            while t < duration:
                if u >= users_at(t):  # this user was stopped by a step down
                    break
                interval = self.interval_at(t)
                ms = self.closed_request_ms(interval, self.closed_mix(interval, t), self.entry_index(interval, entry))
                if ms is None:
                    ms = self.failed(interval, entry)
                rows.append((t, ms))
                # as live: a user gives up at the timeout and sends its next request then (never waits
                # out a latency past it: a load where every request times out still sends, and says so)
                t += min(ms if ms is not None else np.inf, spec.timeout_s * 1000) / 1000
                if isinstance(ms, Failed) and ms.status == 0:
                    t += NO_ENDPOINT_PAUSE_S
        return sorted(rows)

    @staticmethod
    def entry_index(interval: Interval, entry: str) -> int | None:
        """The index of the service a load enters at; None where that is the app's one entry
        (D_msa is then its latency)."""
        model = interval.model
        at = model.index[entry]
        return None if model.entries == [at] else at

    def closed_mix(self, interval: Interval, t: float) -> tuple[tuple[int | None, int], ...]:
        """Every closed loop's users at ``t`` by the service they enter at (``entry_index``): whom a
        closed-loop request waits behind (the loads of apps deployed together each their own)."""
        mix: dict[int | None, int] = {}
        for spec in self.plan.scenario.loads():
            if spec.mode == "closed":
                at = self.entry_index(interval, self.plan.app.resolve_entry(spec.entry))
                mix[at] = mix.get(at, 0) + int(spec.value_at(t))
        return tuple(sorted(((e, u) for e, u in mix.items() if u > 0), key=lambda eu: -1 if eu[0] is None else eu[0]))

    def closed_request_ms(self, interval: Interval, mix: tuple[tuple[int | None, int], ...],
                          entry: int | None) -> float | None:
        """The next closed-loop request's latency in the interval (None: a service has no replica),
        entering at ``entry``: its own draw around the job times the queueing model gives every
        closed loop's users (``mix``: ``closed_mix``)."""
        from harness.sim.queueing import QueueingModel

        if (interval.X.sum(axis=1) == 0).any():
            return None
        left = self._draws.setdefault((id(interval), mix, entry), [])
        if not left:
            E = QueueingModel(interval.model).closed_execution(interval.X, dict(mix), entry)
            left.extend(self.spread.latencies(interval.model, interval.X, RequestSpread.CHUNK, entry, E).tolist()[::-1])
        return left.pop()

    def open_requests(self, spec, rng, k: int, entry: str) -> list[tuple[float, float | None]]:
        """Open, periodic and trace loads: the send times, each interval's replayed through its placement."""
        from harness.sim.trace_replay import replay_ms

        sends = self.send_times(spec, rng)
        out: list[tuple[float, float | None]] = []
        bounds = [i.t_run for i in self.intervals] + [np.inf]
        for i, interval in enumerate(self.intervals):
            self.progress(lambda: f"load {k}: replaying {len(sends):,} requests, placement {i + 1} of "
                                  f"{len(self.intervals)}")
            mine = sends[(sends >= max(0.0, bounds[i])) & (sends < bounds[i + 1])]
            if not len(mine):
                continue
            if (interval.X.sum(axis=1) == 0).any():
                out += [(float(t), self.failed(interval, entry)) for t in mine]
                continue
            ms = replay_ms(interval.model, interval.X, mine, seed=(self.plan.seed or 0) + 7919 * i + k,
                           job_cv=self.job_cv, link_sd=self.link_sd, entry=self.entry_index(interval, entry))
            out += list(zip(map(float, mine), map(float, ms)))
        return out

    def send_times(self, spec, rng) -> np.ndarray:
        duration = self.plan.scenario.duration_s
        if spec.mode == "trace":
            return np.array(sorted(e.time / 1000 for e in spec.trace if e.time / 1000 < duration))
        out = []
        edges = [s.at_s for s in spec.steps] + [duration]
        for s, (a, b) in zip(spec.steps, zip(edges, edges[1:])):
            if s.value <= 0 or a >= duration:
                continue
            if spec.mode == "periodic":
                out.append(np.arange(a, min(b, duration), 1 / s.value))
            else:
                n = rng.poisson(s.value * (min(b, duration) - a))
                out.append(np.sort(rng.uniform(a, min(b, duration), n)))
        return np.concatenate(out) if out else np.empty(0)

    def summarize(self) -> dict:
        t_end = self.T0 + self.plan.scenario.duration_s
        base = self.summary_base(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.T0)), partial=False)
        base["world"] = "sim"
        base["assumptions"] = elements.assumptions(self.plan.scenario, lifecycle=self.pod_clock.measured)
        if self.pod_clock.measured:
            gone = (f"{self.cluster.terminating_s:g} s (terminating_s)" if self.cluster.terminating_s > 0
                    else "its stop time, drawn as the profile measured it")
            base["assumptions"]["cluster"] = (f"a pod serves once ready, its start drawn from the profile's pod "
                                              f"lifecycle per node type; a pod stopped holds its node's room for {gone}")
        else:
            base["assumptions"]["cluster"] = (f"pods start at once; a pod stopped holds its node's room for "
                                              f"{self.cluster.terminating_s:g} s")
        base["assumptions"]["requests"] = (
            "each request at its placement's mean (--variability means)" if self.plan.variability == "means" else
            "each request draws its job times (the profile's spread per node type), its route (one replica per "
            "service, in proportion to the replicas per node) and, where the profile measured it, its RTTs")
        stats, _ = self.request_stats(t_end)
        base.update(stats)
        base["metrics"] = self.placement_metrics(t_end)
        self.out.summary(base)
        (self.out.path / "inputs" / "simulation.json").write_text(json.dumps(base["assumptions"], indent=1))
        return base
