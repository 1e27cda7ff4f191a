"""Profile (output of ``harness profile``): per service, per node type, the execution time of the
service's internal job in ms, plus the testbed's measured RTT matrix, and where measured the
spread of each link's RTT (``rtt_sd_ms``) and how long a pod takes to start and to go per node
type (``lifecycle``). It feeds the simulator; a profile without the last two is read, written and
simulated exactly as before they existed."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_serializer, model_validator

from harness import shipped
from harness.spec.loader import load_model
from harness.spec.names import JoinedName, Name


MAX_MS = 3_600_000.0  # an execution time or an RTT of an hour is no measurement of a microservice


def _finite(value: Any, low: float, where: str, strict: bool = True) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or (value <= low if strict else value < low) or value > MAX_MS:
        raise ValueError(f"{where}: expected a finite number {'>' if strict else '≥'} {low:g}, got {value!r}")


class Timing(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    mean_ms: float = Field(ge=0, le=MAX_MS)
    p50_ms: float = Field(ge=0, le=MAX_MS)
    p95_ms: float = Field(ge=0, le=MAX_MS)
    std_ms: float = Field(ge=0, le=MAX_MS)
    samples: int = Field(ge=1)


MAX_S = 3600.0  # a pod that takes an hour to start or to go is no measurement


class PodLifecycle(BaseModel):
    """How long a pod takes on one node type (``harness.testbed.lifecycle``): from its start until
    it is ready (it serves from then), and from its stop until it is gone (its node's room is
    free), in seconds: means and standard deviations over ``samples`` pods."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    ready_s: float = Field(ge=0, le=MAX_S)
    ready_sd_s: float = Field(0.0, ge=0, le=MAX_S)
    gone_s: float = Field(0.0, ge=0, le=MAX_S)
    gone_sd_s: float = Field(0.0, ge=0, le=MAX_S)
    samples: int = Field(ge=1)


class Calibration(BaseModel):
    """How ``harness calibrate`` fitted this profile to the testbed (``harness.scenarios.calibration``): the
    execution times are then the ones measured live, and the model adds these overheads."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    method: str
    created: str = ""
    source_profile: str = ""
    call_overhead_ms: float = Field(0.0, description="added to the RTT of every call between pods")
    gateway_overhead_ms: float = Field(0.0, description="added to the user's RTT to the entry service")
    rtt: str = Field("configured", description="the RTT matrix the overheads were fitted on top of")
    host_reference_ms: float | None = Field(None, description="testbed.speed.host_reference_ms while calibrating")
    residuals: list[dict[str, Any]] = Field(default_factory=list, description="per measured run: ms measured, "
                                            "predicted before and after")


class Profile(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    app: JoinedName  # the profile's file name: <app>.<testbed>.json (harness.spec.names)
    testbed: Name
    created: str
    harness_version: str
    method: str
    node_types: dict[str, dict[str, Any]]  # type -> tier, cpus, memory_gb, speed
    nodes: dict[str, str]  # node -> type
    services: dict[str, dict[str, Timing]]  # service -> node type -> timing
    rtt_ms: dict[str, dict[str, dict[str, float | None]]]  # measured / configured -> a -> b -> ms
    calibration: Calibration | None = None  # set by harness calibrate; None: REACH's model as published
    # a -> b -> the standard deviation of the link's measured RTT (its jitter), ms; empty: none measured
    rtt_sd_ms: dict[str, dict[str, float | None]] = Field(default_factory=dict)
    lifecycle: dict[str, PodLifecycle] = Field(default_factory=dict)  # node type -> its pods' start and stop

    @model_serializer(mode="wrap")
    def _without_empty(self, handler):
        """The fields added after the format's first version left out while empty: a profile that
        measured no jitter or lifecycle is written (and hashed: ``policies.provenance``) as before."""
        out = handler(self)
        for key in ("rtt_sd_ms", "lifecycle"):
            if isinstance(out, dict) and not out.get(key):
                out.pop(key, None)
        return out

    @model_validator(mode="after")
    def _numbers(self):
        """What the untyped parts hold: each node type's speed and capacity, every RTT."""
        for name, facts in self.node_types.items():
            for key, low, strict in (("speed", 0, True), ("cpus", 0, True), ("memory_gb", 0, True), ("cost", 0, False)):
                if key in facts:
                    _finite(facts[key], low, f"node_types.{name}.{key}", strict)
        for kind, rows in self.rtt_ms.items():
            for a, row in rows.items():
                for b, ms in row.items():
                    if ms is not None:
                        _finite(ms, 0, f"rtt_ms.{kind}.{a}.{b}", strict=False)
        for a, row in self.rtt_sd_ms.items():
            for b, ms in row.items():
                if ms is not None:
                    _finite(ms, 0, f"rtt_sd_ms.{a}.{b}", strict=False)
        return self

    def execution_ms(self, service: str, node_type: str) -> float:
        return self.services[service][node_type].mean_ms


def load_profile(path: str | Path) -> Profile:
    return load_model(Profile, path)


def source_profile(profile: Profile) -> Profile | None:
    """The profile a calibrated one was made from (its ``calibration.source_profile``, relative to
    the working directory or to the repository), for the error of REACH's model as published beside
    the calibrated one; None when ``profile`` is not calibrated or its source is gone."""
    if profile.calibration is None or not profile.calibration.source_profile:
        return None
    path = shipped.find(profile.calibration.source_profile)
    if not path.is_file():
        return None
    try:
        return load_profile(path)
    except Exception:  # an unreadable source only costs the comparison, never the run
        return None


def compose_profiles(apps: list, profiles: list[Profile]) -> Profile:
    """The profiles of apps deployed together (``spec.app.compose``): services renamed alike; the
    testbed, nodes and RTTs are the first profile's (all were measured on one testbed), and so are
    a calibration's fitted overheads; a calibrated profile's source, one app's, is not the
    composition's (its services are named otherwise), so the composition names none."""
    if len(profiles) == 1:
        return profiles[0]
    services = {f"{a.name}-{s}": t for a, p in zip(apps, profiles) for s, t in p.services.items()}
    first = profiles[0]
    calibration = None if first.calibration is None else first.calibration.model_copy(update={"source_profile": ""})
    return first.model_copy(update={"app": "+".join(a.name for a in apps), "services": services,
                                    "calibration": calibration})
