"""pod-kill: the oldest pod of a service crashes (SIGKILL) and stays published: callers see errors
until the crash watch replaces it on its node, as kubelet restarts a container."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict

from harness.faults import FaultKind, register
from harness.spec.scenario import FaultParams


class PodKill(FaultParams):
    model_config = ConfigDict(extra="forbid")
    kind: Literal["pod-kill"]
    service: str


@register
class PodKillKind(FaultKind):
    name = "pod-kill"
    Params = PodKill
    doc = "the oldest pod of a service crashes"
    fields = ("service", "killed", "node")
    simulation_assumes = "the crash watch finds the dead pod within a second, as live; its replacement starts at once"
    simulation_assumes_lifecycle = ("the crash watch finds the dead pod within a second, as live; its replacement "
                                    "serves after its start time (the profile's pod lifecycle)")

    def check(self, fault, nodes, app):
        if fault.service not in app.services:
            return f"unknown service {fault.service!r} (services: {', '.join(app.services)})"
        return None

    def inject(self, ctx, fault):
        pods = [p for p in ctx.cluster.pods() if p.service == fault.service]
        if not pods:
            return {"service": fault.service, "killed": None}
        ctx.cluster.kill_pod(pods[0])
        return {"service": fault.service, "killed": pods[0].name, "node": pods[0].node}
