"""cpu-hog: a noisy neighbour. CPU-burning processes run inside a node's cgroup for a while, so
the pods there get less of the node's CPU: the "performance variations" REACH mentions, which the
simulator (it knows only the profile) cannot see. They stop by themselves after ``duration_s``;
the run's clean-up kills any still running."""

from __future__ import annotations

import sys
from typing import Literal

from pydantic import ConfigDict, Field, model_validator

from harness.faults import FaultKind, register
from harness.spec.scenario import FaultParams

BURN = "import sys, time\nend = time.monotonic() + float(sys.argv[1])\nwhile time.monotonic() < end:\n    pass\n"


class CpuHog(FaultParams):
    model_config = ConfigDict(extra="forbid")
    kind: Literal["cpu-hog"]
    node: str | None = Field(None, description="the node, by name")
    node_type: str | None = Field(None, description="or the first node (by name) of this type")
    workers: int = Field(1, ge=1, le=64, description="busy processes, one core's worth each at most")
    duration_s: float = Field(gt=0)

    @model_validator(mode="after")
    def _one_target(self):
        if (self.node is None) == (self.node_type is None):
            raise ValueError("cpu-hog needs one of node or node_type")
        return self


@register
class CpuHogKind(FaultKind):
    name = "cpu-hog"
    Params = CpuHog
    doc = "CPU-burning processes share a node's CPU with its pods for a while"
    fields = ("node", "workers", "duration_s", "pids")

    def check(self, fault, nodes, app):
        if fault.node is not None and fault.node not in {n.name for n in nodes}:
            return f"unknown node {fault.node!r}"
        if fault.node_type is not None and fault.node_type not in {n.type for n in nodes}:
            return f"no node of type {fault.node_type!r} on this testbed"
        return None

    simulation_assumes = ("each busy process takes as much of the node's CPU as a pod does, so the node's pods "
                          "take (workers + 1) times their execution time while it runs")

    def window_s(self, fault):
        return 0.0  # a slow node is what it measures; errors under it are not excused

    @staticmethod
    def node(ctx, fault) -> str:
        return fault.node or sorted(n.name for n in ctx.cluster.nodes if n.type == fault.node_type)[0]

    def inject(self, ctx, fault):
        node = self.node(ctx, fault)
        procs = [ctx.cluster.start_process(node, [sys.executable, "-c", BURN, str(fault.duration_s)])
                 for _ in range(fault.workers)]

        def stop():
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait(5)
        ctx.on_cleanup(stop)
        return {"node": node, "workers": fault.workers, "duration_s": fault.duration_s, "pids": [p.pid for p in procs]}

    def simulate(self, ctx, fault):
        node = self.node(ctx, fault)
        ctx.slow_node(node, fault.workers + 1.0, fault.duration_s)
        return {"node": node, "workers": fault.workers, "duration_s": fault.duration_s, "pids": []}
