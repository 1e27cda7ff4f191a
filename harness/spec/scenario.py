"""Scenarios: what a live run does over time (input of ``harness run``).

A scenario names the app and its replicas, the load over time (Locust users, closed loop, or
a Poisson arrival rate, open loop), the faults over time, the autoscaler (the Kubernetes HPA
formula) and the rescheduler's period. Built-in scenarios ship in ``harness/scenarios``;
a user's scenario is any file of the same shape, given by path.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from harness.errors import UserError
from harness.spec.loader import parse_model, read_document


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


class Fault(BaseModel):
    model_config = ConfigDict(extra="forbid")
    at_s: float = Field(ge=0)
    kind: Literal["node-failure", "node-recovery", "latency", "pod-kill"]
    # node-failure / node-recovery: nodes by name, or the first node (by name) of each type
    nodes: list[str] = Field(default_factory=list)
    node_types: list[str] = Field(default_factory=list)
    # latency: every pair between the two tiers gets this round-trip time
    tiers: list[Literal["cloud", "edge", "client"]] = Field(default_factory=list)
    rtt_ms: float | None = Field(None, ge=0)
    # pod-kill: the oldest pod of this service dies (a crash; nothing restarts it but the harness's self-healing)
    service: str | None = None

    @model_validator(mode="after")
    def _complete(self):
        if self.kind in ("node-failure", "node-recovery") and not (self.nodes or self.node_types):
            raise ValueError(f"{self.kind} needs nodes or node_types")
        if self.kind == "latency" and (len(self.tiers) != 2 or self.rtt_ms is None):
            raise ValueError("latency needs tiers (two of cloud, edge, client) and rtt_ms")
        if self.kind == "pod-kill" and not self.service:
            raise ValueError("pod-kill needs service")
        return self


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
    faults: list[Fault] = Field(default_factory=list)
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


def builtin_dir():
    return resources.files("harness") / "scenarios"


def builtin_names() -> list[str]:
    return sorted(p.name.removesuffix(".yaml") for p in builtin_dir().iterdir() if p.name.endswith(".yaml"))


def load_scenario(name_or_path: str) -> tuple[Scenario, str]:
    """A built-in name or a file path -> (scenario, where it came from)."""
    path = Path(name_or_path)
    if not path.exists() and name_or_path in builtin_names():
        path = Path(str(builtin_dir() / f"{name_or_path}.yaml"))
    elif not path.exists():
        raise UserError(f"no scenario file and no built-in scenario of that name (built-in: {', '.join(builtin_names())})",
                        source=name_or_path)
    return parse_model(Scenario, read_document(path), str(path)), str(path)


def app_path(scenario: Scenario, workloads: Path) -> Path:
    p = Path(scenario.app)
    if p.suffix == ".json" or "/" in scenario.app:
        return p
    return workloads / f"{scenario.app}.json"
