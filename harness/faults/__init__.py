"""Fault plugins: each kind is one function that does the fault through the Cluster interface
and returns what it did (for the event log). Self-healing is the caller's job: a node failure
returns the pods it took down."""

from __future__ import annotations

from typing import Callable

from harness.errors import UserError
from harness.spec.scenario import Fault
from harness.testbed.cluster import Cluster
from harness.testbed.pods import Pod

FaultFn = Callable[[Cluster, Fault], dict]
KINDS: dict[str, FaultFn] = {}


def kind(name: str):
    def deco(fn: FaultFn) -> FaultFn:
        KINDS[name] = fn
        return fn
    return deco


def target_nodes(cluster: Cluster, fault: Fault) -> list[str]:
    """Named nodes, then for each listed type the first node of it by name (the same node for
    every policy, so runs compare), preferring nodes that are up for a failure."""
    names = {n.name for n in cluster.nodes}
    for n in fault.nodes:
        if n not in names:
            raise UserError(f"unknown node {n!r} (nodes: {', '.join(sorted(names))})", field="faults.nodes")
    out = list(fault.nodes)
    for t in fault.node_types:
        of_type = sorted(n.name for n in cluster.nodes if n.type == t)
        if not of_type:
            raise UserError(f"no node of type {t!r} on this testbed", field="faults.node_types")
        up = [n for n in of_type if cluster.node_up(n) == (fault.kind == "node-failure") and n not in out]
        out.append((up or of_type)[0])
    return out


@kind("node-failure")
def node_failure(cluster: Cluster, fault: Fault) -> dict:
    lost: list[Pod] = []
    nodes = target_nodes(cluster, fault)
    for n in nodes:
        lost += cluster.fail_node(n)
    return {"nodes": nodes, "lost": lost}


@kind("node-recovery")
def node_recovery(cluster: Cluster, fault: Fault) -> dict:
    nodes = target_nodes(cluster, fault)
    for n in nodes:
        cluster.recover_node(n)
    return {"nodes": nodes}


@kind("latency")
def latency(cluster: Cluster, fault: Fault) -> dict:
    a_tier, b_tier = fault.tiers
    pairs = [(a.name, b.name) for a in cluster.nodes for b in cluster.nodes
             if a.name < b.name and {a.tier, b.tier} == {a_tier, b_tier} and (a_tier != b_tier or a.tier == a_tier)]
    for a, b in pairs:
        cluster.set_latency(a, b, fault.rtt_ms)
    return {"tiers": fault.tiers, "rtt_ms": fault.rtt_ms, "pairs": len(pairs)}


@kind("pod-kill")
def pod_kill(cluster: Cluster, fault: Fault) -> dict:
    pods = [p for p in cluster.pods() if p.service == fault.service]
    if not pods:
        return {"service": fault.service, "killed": None}
    cluster.kill_pod(pods[0])
    return {"service": fault.service, "killed": pods[0].name, "node": pods[0].node}


def inject(cluster: Cluster, fault: Fault) -> dict:
    return KINDS[fault.kind](cluster, fault)
