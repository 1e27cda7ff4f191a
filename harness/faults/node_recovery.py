"""node-recovery: failed nodes come back, empty (as rebooted machines); nothing moves to them
until a placer or rescheduler decides so."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict

from harness.faults import FaultKind, NodeTargets, check_node_targets, register, target_nodes


class NodeRecovery(NodeTargets):
    model_config = ConfigDict(extra="forbid")
    kind: Literal["node-recovery"]


@register
class NodeRecoveryKind(FaultKind):
    name = "node-recovery"
    Params = NodeRecovery
    doc = "failed nodes come back, empty"
    fields = ("nodes",)
    marker = "recovery"

    def check(self, fault, nodes, app):
        return check_node_targets(fault, nodes)

    def inject(self, ctx, fault):
        nodes = target_nodes(ctx.cluster, fault, want_up=False)
        for n in nodes:
            ctx.cluster.recover_node(n)
        return {"nodes": nodes}
