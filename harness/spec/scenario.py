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



class Step(BaseModel):
    """From ``at_s`` on (seconds after the load starts), ``value`` users or requests/s."""

    model_config = ConfigDict(extra="forbid")
    at_s: float = Field(ge=0)
    value: float = Field(ge=0)


class Load(BaseModel):
    model_config = ConfigDict(extra="forbid")
    # closed: Locust users that send their next request when the last one returns, no wait
    # (REACH's best-effort generator); open: Poisson arrivals at a rate, whatever the replies
    # do, so slow replies cannot slow the load down (no coordinated omission).
    mode: Literal["closed", "open"] = "closed"
    steps: list[Step] = Field(default_factory=lambda: [Step(at_s=0, value=1)], min_length=1)
    timeout_s: float = Field(10.0, gt=0, description="a request slower than this counts as failed")

    @model_validator(mode="after")
    def _ordered(self):
        times = [s.at_s for s in self.steps]
        if times != sorted(times) or times[0] != 0:
            raise ValueError("steps must start at at_s 0 and be in time order")
        if self.mode == "closed" and any(s.value != int(s.value) for s in self.steps):
            raise ValueError("closed-loop steps give whole numbers of users")
        return self


class FaultParams(BaseModel):
    """What every fault has: when (seconds after the load starts) and its kind. Each fault kind
    (a module of ``harness/faults/``) extends this with its own parameters and validation."""

    model_config = ConfigDict(extra="allow")  # the kind's own fields, checked by the kind's model
    at_s: float = Field(ge=0)
    kind: str


class Autoscaling(BaseModel):
    """The Kubernetes HPA on CPU: desired = ceil(replicas * utilisation / target), utilisation =
    CPU used / CPU requested, averaged over the service's pods; no change within the tolerance."""

    model_config = ConfigDict(extra="forbid")
    enabled: bool = False
    target_cpu: float = Field(0.5, gt=0, description="target CPU utilisation, share of the request")
    min_replicas: int = Field(1, ge=1)
    max_replicas: int = Field(5, ge=1)
    period_s: float = Field(15.0, gt=0, description="HPA sync period")
    tolerance: float = Field(0.1, ge=0)
    window: str = Field("15s", description="Prometheus rate window for CPU")
    scale_down_stabilization_s: float = Field(300.0, ge=0)


class Rescheduler(BaseModel):
    model_config = ConfigDict(extra="forbid")
    period_s: float = Field(15.0, gt=0, description="time between rescheduling rounds")
    start_s: float = Field(5.0, ge=0, description="first round, seconds after the load starts")
    max_moves: int = Field(10, ge=0, description="moves per round at most")


class Scenario(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    description: str
    duration_s: float = Field(gt=0)
    app: str = Field(description="a shipped workload name (workloads/<name>.json) or a path")
    replicas: int | None = Field(None, ge=1, description="replicas of every service (default: the app's)")
    warmup_s: float = Field(5.0, ge=0, description="requests sent before this are not summarised")
    threshold_ms: float = Field(250.0, gt=0)
    load: Load = Field(default_factory=Load)
    faults: list[FaultParams] = Field(default_factory=list)
    autoscaling: Autoscaling = Field(default_factory=Autoscaling)
    rescheduler: Rescheduler = Field(default_factory=Rescheduler)

    @model_validator(mode="after")
    def _within(self):
        for i, f in enumerate(self.faults):
            if f.at_s >= self.duration_s:
                raise ValueError(f"faults[{i}].at_s ({f.at_s:g}) is not before duration_s ({self.duration_s:g})")
        if self.autoscaling.min_replicas > self.autoscaling.max_replicas:
            raise ValueError("autoscaling.min_replicas is above max_replicas")
        return self
