"""latency: every node pair between two tiers gets a new round-trip time while the app runs; the
simulator's model is rebuilt from it, and the RTTs are set back at the end."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from harness.faults import FaultKind, register
from harness.spec.scenario import FaultParams


class Latency(FaultParams):
    model_config = ConfigDict(extra="forbid")
    kind: Literal["latency"]
    tiers: list[str] = Field(min_length=2, max_length=2, description="the two tiers whose pairs change")
    rtt_ms: float = Field(ge=0)


@register
class LatencyKind(FaultKind):
    name = "latency"
    Params = Latency
    doc = "the round-trip time between two tiers changes"
    fields = ("tiers", "rtt_ms", "pairs")

    def check(self, fault, nodes, app):
        tiers = {n.tier for n in nodes}
        missing = [t for t in fault.tiers if t not in tiers]
        return f"no node of tier {missing[0]!r} on this testbed (tiers: {', '.join(sorted(tiers))})" if missing else None

    def inject(self, ctx, fault):
        a_tier, b_tier = fault.tiers
        nodes = ctx.cluster.nodes
        pairs = [(a.name, b.name) for a in nodes for b in nodes
                 if a.name < b.name and {a.tier, b.tier} == {a_tier, b_tier} and (a_tier != b_tier or a.tier == a_tier)]
        before = ctx.cluster.rtt_groups()  # per group of nodes: no N × N copy of a large testbed
        for a, b in pairs:
            ctx.cluster.set_latency(a, b, fault.rtt_ms)

        def restore():
            for a, b in pairs:
                ctx.cluster.set_latency(a, b, before.get(a, b))
        ctx.on_cleanup(restore)
        ctx.relearn_topology()
        return {"tiers": fault.tiers, "rtt_ms": fault.rtt_ms, "pairs": len(pairs)}
