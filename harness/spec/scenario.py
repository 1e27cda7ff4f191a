"""Scenarios: what a live run does over time (input of ``harness run``).

A scenario names the app and its replicas, the load over time (Locust users, closed loop, or
a Poisson arrival rate, open loop), the faults over time, the autoscaler (the Kubernetes HPA
formula) and the rescheduler's period. Built-in scenarios ship in ``harness/scenarios``;
a user's scenario is any file of the same shape, given by path (``harness.scenarios.catalog``
loads both, with each fault checked by its kind's model).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from harness.spec.names import Name



class Step(BaseModel):
    """From ``at_s`` on (seconds after the load starts), ``value`` users or requests/s."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    at_s: float = Field(ge=0)
    value: float = Field(ge=0)


class TraceEvent(BaseModel):
    """One request of a μBench Runner workload file: ``time`` in ms after the start, the service."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    time: float = Field(ge=0)
    service: str


class Load(BaseModel):
    """One load: its shape, where it enters the app and which client node sends it. A scenario
    may have several (a list), each with its own entry service and client."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    # closed: Locust users that send their next request when the last one returns, no wait
    # (REACH's best-effort generator); open: Poisson arrivals at a rate, whatever the replies
    # do, so slow replies cannot slow the load down (no coordinated omission); periodic: one
    # request every 1/rate s (μBench Runner's periodic mode); trace: the requests of a μBench
    # Runner workload file, each at its time to its service (its file mode).
    mode: Literal["closed", "open", "periodic", "trace"] = "closed"
    steps: list[Step] = Field(default_factory=lambda: [Step(at_s=0, value=1)], min_length=1)
    steps_file: str | None = Field(None, description="CSV of at_s,value rows (a recorded rate): replaces steps")
    trace_file: str | None = Field(None, description="mode trace: a μBench workload file [{time (ms), service}]")
    trace: list[TraceEvent] = Field(default_factory=list, description="mode trace: the events (from trace_file)")
    entry: str | None = Field(None, description="the service the requests go to (default: the app's gateway)")
    client: str | None = Field(None, description="the client node that sends them (default: the first one up)")
    timeout_s: float = Field(10.0, gt=0, description="a request slower than this counts as failed")

    @model_validator(mode="after")
    def _ordered(self):
        if self.mode == "trace" and not self.trace:
            raise ValueError("mode trace needs trace_file (a μBench workload file) or trace events")
        times = [s.at_s for s in self.steps]
        if times != sorted(times) or times[0] != 0:
            raise ValueError("steps must start at at_s 0 and be in time order")
        if self.mode == "closed" and any(s.value != int(s.value) for s in self.steps):
            raise ValueError("closed-loop steps give whole numbers of users")
        return self

    def value_at(self, t_run: float) -> float:
        """Users or requests/s at ``t_run`` (seconds after the load starts): the latest step's value."""
        return next(s.value for s in reversed(self.steps) if s.at_s <= max(0.0, t_run))


class FaultParams(BaseModel):
    """What every fault has: when (seconds after the load starts) and its kind. Each fault kind
    (a module of ``harness/faults/``) extends this with its own parameters and validation."""

    model_config = ConfigDict(extra="allow", allow_inf_nan=False)  # the kind's own fields, checked by the kind's model
    at_s: float = Field(ge=0)
    kind: str


class Autoscaling(BaseModel):
    """The Kubernetes HPA on CPU: desired = ceil(replicas * utilisation / target), utilisation =
    CPU used / CPU requested, averaged over the service's pods; no change within the tolerance."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    enabled: bool = False
    target_cpu: float = Field(0.5, gt=0, description="target CPU utilisation, share of the request")
    min_replicas: int = Field(1, ge=1)
    max_replicas: int = Field(5, ge=1)
    period_s: float = Field(15.0, gt=0, description="HPA sync period")
    tolerance: float = Field(0.1, ge=0)
    window: str = Field("15s", description="Prometheus rate window for CPU")
    scale_down_stabilization_s: float = Field(300.0, ge=0)


class Rescheduler(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    period_s: float = Field(15.0, gt=0, description="time between rescheduling rounds")
    start_s: float = Field(5.0, ge=0, description="first round, seconds after the load starts")
    max_moves: int = Field(10, ge=0, description="moves per round at most")
    plan_budget_s: float = Field(30.0, gt=0, description="the longest a policy may think about one plan() or "
                                 "place(), in wall-clock seconds, live and in simulation; past it a plan-timeout "
                                 "event (the round ends, or the pods stay pending) and the run goes on")
    on_policy_error: Literal["retry", "idle"] = Field("retry", description="after the policy raises in plan(): ask "
                                                      "it again next round (retry) or not for the rest of the run (idle)")


class HpaPace(BaseModel):
    """How the Kubernetes HPA's default behaviour paces a wanted count: one change every
    ``sync_s``; up by at most the larger of 4 pods and 100 %; down only to the highest count wanted
    in the last ``scale_down_stabilization_s``."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    sync_s: float = Field(15.0, gt=0)
    scale_down_stabilization_s: float = Field(300.0, ge=0)


class ReplicaSchedule(BaseModel):
    """Cycles of fixed replica counts (KubeDSM's workloads): at the start of cycle k (k x cycle_s
    after the load starts) each listed service is scaled to its count, bypassing the autoscaler, so
    every policy meets the same demand at the same time. A service a cycle leaves out keeps its count.
    With ``hpa``, the counts are what the HPA is asked for, and reach the cluster at its pace."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    cycle_s: float = Field(gt=0)
    cycles: list[dict[str, int]] = Field(min_length=1)
    hpa: HpaPace | None = None

    @model_validator(mode="after")
    def _counts(self):
        for i, cycle in enumerate(self.cycles):
            for service, n in cycle.items():
                if n < 1:
                    raise ValueError(f"cycles[{i}].{service}: a service keeps at least 1 replica, got {n}")
        return self


class Background(BaseModel):
    """Other tenants on the nodes (REACH's random background utilisation): each node has a share of
    its CPU and memory taken, drawn per node from the run's seed, uniform in the range, for the
    whole run. The policies see that room as used; nothing runs in it, live or simulated."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    cpu: tuple[float, float] = Field((0.0, 0.5), description="share of each node's cores taken (low, high)")
    memory: tuple[float, float] = Field((0.0, 0.5), description="share of each node's memory taken (low, high)")

    @model_validator(mode="after")
    def _ranges(self):
        for name, (lo, hi) in (("cpu", self.cpu), ("memory", self.memory)):
            if not 0 <= lo <= hi < 1:
                raise ValueError(f"{name}: expected 0 <= low <= high < 1, got [{lo}, {hi}]")
        return self


class RequestStream(BaseModel):
    """Deployment requests (HephaestusForge's workload): each asks for R more replicas of a
    service, arrives as a Poisson process and leaves after an exponential lifetime; the policy's
    placer places all R, or the request is rejected (none started)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    service: str | list[str] = Field(description="the service, or several: each request is for one of them, drawn "
                                                 "uniformly")
    rate_per_s: float = Field(gt=0, description="mean arrivals per second")
    mean_lifetime_s: float = Field(gt=0)
    replicas: tuple[int, int] = Field((1, 4), description="R drawn uniformly from this range (inclusive)")
    start_s: float = Field(0.0, ge=0)

    @model_validator(mode="after")
    def _range(self):
        if not 1 <= self.replicas[0] <= self.replicas[1]:
            raise ValueError("replicas: a range [min, max] with 1 <= min <= max")
        if isinstance(self.service, list) and not self.service:
            raise ValueError("service: a name or a non-empty list of names")
        return self

    @property
    def services(self) -> list[str]:
        return [self.service] if isinstance(self.service, str) else list(self.service)


class Limits(BaseModel):
    """What a scenario may ask for at most (issue 65): past it the scenario is refused at
    validation, before anything runs. Each is raised here, knowingly: a simulation keeps every
    request it replays in memory (100,000 open-loop requests of Chain held about 500 MB)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    duration_s: float = Field(7 * 86400.0, gt=0, description="a run's length, s (default a week)")
    rate_per_s: float = Field(10_000.0, gt=0, description="an open or periodic load's requests/s, a request "
                              "stream's arrivals/s")
    users: int = Field(10_000, ge=1, description="a closed load's users")
    requests: int = Field(100_000, ge=1, description="the requests the open and periodic loads send over the run")


class Scenario(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    name: Name  # its run directories' name (harness.spec.names)
    description: str
    duration_s: float = Field(gt=0)
    app: str | list[str] = Field(description="a shipped workload name (workloads/<name>.json) or a path; several "
                                 "apps as a list (deployed together, services named <app>-<service>)")
    replicas: int | None = Field(None, ge=1, description="replicas of every service (default: the app's)")
    warmup_s: float = Field(5.0, ge=0, description="requests sent before this are not summarised")
    threshold_ms: float = Field(250.0, gt=0)
    load: Load | list[Load] = Field(default_factory=Load, description="one load, or several (each its own entry)")
    faults: list[FaultParams] = Field(default_factory=list)
    autoscaling: Autoscaling = Field(default_factory=Autoscaling)
    rescheduler: Rescheduler = Field(default_factory=Rescheduler)
    replica_schedule: ReplicaSchedule | None = None
    request_stream: RequestStream | None = None
    background: Background | None = None
    limits: Limits = Field(default_factory=Limits, description="what it may ask for at most; raise knowingly")

    def apps(self) -> list[str]:
        return self.app if isinstance(self.app, list) else [self.app]

    def loads(self) -> list[Load]:
        return self.load if isinstance(self.load, list) else [self.load]

    @model_validator(mode="after")
    def _within(self):
        if isinstance(self.load, list) and not self.load:
            raise ValueError("load: give at least one load")
        if self.replica_schedule is not None and self.autoscaling.enabled:
            raise ValueError("replica_schedule bypasses the autoscaler: set autoscaling.enabled false, or drop the schedule")
        for i, f in enumerate(self.faults):
            if f.at_s >= self.duration_s:
                raise ValueError(f"faults[{i}].at_s ({f.at_s:g}) is not before duration_s ({self.duration_s:g})")
        if self.autoscaling.min_replicas > self.autoscaling.max_replicas:
            raise ValueError("autoscaling.min_replicas is above max_replicas")
        self._bounded()
        return self

    def _bounded(self) -> None:
        lim = self.limits
        raise_it = "raise limits.{} knowingly to run it"
        if self.duration_s > lim.duration_s:
            raise ValueError(f"duration_s {self.duration_s:g} is above the limit {lim.duration_s:g} s; "
                             + raise_it.format("duration_s"))
        requests = 0.0
        for k, load in enumerate(self.loads()):
            where = f"load[{k}]" if isinstance(self.load, list) else "load"
            edges = [s.at_s for s in load.steps] + [max(self.duration_s, load.steps[-1].at_s)]
            for i, step in enumerate(load.steps):
                if load.mode == "closed" and step.value > lim.users:
                    raise ValueError(f"{where}.steps[{i}].value: {step.value:g} users is above the limit {lim.users}; "
                                     + raise_it.format("users"))
                if load.mode in ("open", "periodic"):
                    if step.value > lim.rate_per_s:
                        raise ValueError(f"{where}.steps[{i}].value: {step.value:g} requests/s is above the limit "
                                         f"{lim.rate_per_s:g}; " + raise_it.format("rate_per_s"))
                    requests += step.value * max(0.0, min(edges[i + 1], self.duration_s) - step.at_s)
        if requests > lim.requests:
            raise ValueError(f"the loads would send {requests:.3g} requests over {self.duration_s:g} s, above the limit "
                             f"{lim.requests}; shorten the run or lower the rate, or " + raise_it.format("requests"))
        if self.request_stream is not None and self.request_stream.rate_per_s > lim.rate_per_s:
            raise ValueError(f"request_stream.rate_per_s {self.request_stream.rate_per_s:g} is above the limit "
                             f"{lim.rate_per_s:g}; " + raise_it.format("rate_per_s"))
