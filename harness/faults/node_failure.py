"""node-failure: nodes crash (every process on them dies, their links go down); their pods are
placed again on the remaining nodes (self-healing); nodes still down at the end are recovered."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict

from harness.faults import FaultKind, NodeTargets, check_node_targets, register, target_nodes


class NodeFailure(NodeTargets):
    model_config = ConfigDict(extra="forbid")
    kind: Literal["node-failure"]


@register
class NodeFailureKind(FaultKind):
    name = "node-failure"
    Params = NodeFailure
    doc = "nodes crash; their pods are placed again elsewhere (self-healing)"
    fields = ("nodes", "lost")

    def check(self, fault, nodes, app):
        return check_node_targets(fault, nodes)

    def inject(self, ctx, fault):
        nodes = target_nodes(ctx.cluster, fault, want_up=True)
        lost = []
        for n in nodes:
            lost += ctx.cluster.fail_node(n)

        def recover():
            for n in nodes:
                if not ctx.cluster.node_up(n):
                    ctx.cluster.recover_node(n)
        ctx.on_cleanup(recover)
        ctx.heal(lost)
        return {"nodes": nodes, "lost": [p.name for p in lost]}
