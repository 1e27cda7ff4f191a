"""What the seed systems report besides latency, from the placements a run (or ``harness
evaluate``) held and its events: one definition each, used by the summary, the comparison, the
report and evaluate.

- **deployment cost**: a node costs its type's ``cost`` per hour while it hosts at least one of the
  app's pods (an idle node could be released); cost = sum over the placements held of the cost
  per hour of the nodes in use x the hours held. (HephaestusForge's cost is per replica: the mean
  node cost over replicas, ``replica_cost``, is reported too.)
- **edge ratio** of a service: the share of its pods on nodes whose tier has role edge; the run's
  edge ratio is the mean over services, time-weighted over the placements held (KubeDSM); its
  standard deviation across services says how evenly the edge is shared.
- **rejection rate**: pods no node had room for (left pending) over the pods asked for (deployment,
  self-healing, restarts, scale-ups); with a request stream also per request (a request is rejected
  whole when any of its pods finds no room).
- **Gini coefficient** of the replicas across the placement nodes (all of them, empty ones
  included) and across sites: G = sum_i sum_j |x_i - x_j| / (2 n^2 mean(x)) (HephaestusForge eq. 10).
- **migrations by kind**: moves from a node of one role to a node of another (edge->edge,
  edge->cloud, cloud->edge, cloud->cloud).
- **edge fragmentation**: the mean over edge nodes of 1 - u_cpu * u_mem, u the requested share of
  the node's capacity, time-weighted: the per-node fragmentation of KubeDSM's figure scripts
  (MineDraft; the paper's eq. 13 is lost), over the edge nodes only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

Placement = Mapping[str, list[str]]


@dataclass(frozen=True)
class NodeInfo:
    role: str
    cpus: float
    memory_mib: float
    cost: float = 0.0  # per hour
    site: str | None = None


def gini(x) -> float:
    """Σ_ij |x_i − x_j| / (2 n² mean), the pairs' sum taken over the sorted values,
    2 Σ_i (2i − n − 1) x_(i): n log n, not n² (ten thousand nodes are 10⁸ pairs); the same sum
    to the last bit where the values are counts."""
    x = np.asarray(x, float)
    if len(x) == 0 or x.sum() == 0:
        return 0.0
    n = len(x)
    pairs = 2 * float(np.dot(2 * np.arange(1, n + 1, dtype=float) - n - 1, np.sort(x)))
    return float(pairs / (2 * n ** 2 * x.mean()))


def cost_per_hour(placement: Placement, nodes: Mapping[str, NodeInfo]) -> float:
    used = {n for where in placement.values() for n in where}
    return float(sum(nodes[n].cost for n in used if n in nodes))


def replica_cost(placement: Placement, nodes: Mapping[str, NodeInfo]) -> float | None:
    costs = [nodes[n].cost for where in placement.values() for n in where if n in nodes]
    return float(np.mean(costs)) if costs else None


def edge_ratios(placement: Placement, nodes: Mapping[str, NodeInfo]) -> dict[str, float]:
    """Per service with pods: the share of its pods on edge nodes."""
    return {s: sum(nodes[n].role == "edge" for n in where) / len(where) for s, where in placement.items() if where}


def replicas_per_node(placement: Placement, nodes: Mapping[str, NodeInfo]) -> dict[str, int]:
    out = {n: 0 for n, info in nodes.items() if info.role != "client"}
    for where in placement.values():
        for n in where:
            if n in out:
                out[n] += 1
    return out


def gini_sites(placement: Placement, nodes: Mapping[str, NodeInfo]) -> float | None:
    per_node = replicas_per_node(placement, nodes)
    sites: dict[str, int] = {}
    for n, k in per_node.items():
        if nodes[n].site is not None:
            sites[nodes[n].site] = sites.get(nodes[n].site, 0) + k
    return gini(list(sites.values())) if len(sites) > 1 else None


def edge_fragmentation(placement: Placement, nodes: Mapping[str, NodeInfo],
                       requests: Mapping[str, tuple[float, float]]) -> float | None:
    """``requests``: service -> (cores, MiB) of one pod."""
    edge = [n for n, info in nodes.items() if info.role == "edge"]
    if not edge:
        return None
    cpu = dict.fromkeys(edge, 0.0)
    mem = dict.fromkeys(edge, 0.0)
    for s, where in placement.items():
        for n in where:
            if n in cpu:
                cpu[n] += requests[s][0]
                mem[n] += requests[s][1]
    frag = [1 - min(1.0, cpu[n] / nodes[n].cpus) * min(1.0, mem[n] / nodes[n].memory_mib) for n in edge]
    return float(np.mean(frag))


def snapshot(placement: Placement, nodes: Mapping[str, NodeInfo], requests: Mapping[str, tuple[float, float]]) -> dict:
    """Every placement metric of one placement (what ``harness sweep`` reports per scenario)."""
    ratios = edge_ratios(placement, nodes)
    return {"cost_per_hour": cost_per_hour(placement, nodes), "replica_cost": replica_cost(placement, nodes),
            "edge_ratio": float(np.mean(list(ratios.values()))) if ratios else None,
            "edge_ratio_std": float(np.std(list(ratios.values()))) if ratios else None,
            "edge_ratio_by_service": ratios,
            "gini_nodes": gini(list(replicas_per_node(placement, nodes).values())),
            "gini_sites": gini_sites(placement, nodes),
            "edge_fragmentation": edge_fragmentation(placement, nodes, requests)}


def held(placements: list[dict], t_start: float, t_end: float) -> list[tuple[dict, float]]:
    """(placement record, seconds it held within [t_start, t_end]) for each record of
    placements.jsonl; a record holds until the next one."""
    out = []
    for i, rec in enumerate(placements):
        a = max(float(rec["t"]), t_start)
        b = min(float(placements[i + 1]["t"]) if i + 1 < len(placements) else t_end, t_end)
        if b > a:
            out.append((rec, b - a))
    return out


def migrations(events: list[dict], nodes: Mapping[str, NodeInfo]) -> dict[str, int]:
    """Moves by the roles of their source and target nodes."""
    out: dict[str, int] = {}
    for e in events:
        if e["kind"] == "move":
            d = e.get("detail") or {}
            src, dst = nodes.get(d.get("source")), nodes.get(d.get("target"))
            if src and dst:
                key = f"{src.role}->{dst.role}"
                out[key] = out.get(key, 0) + 1
    return out


def rejections(events: list[dict]) -> tuple[int, int]:
    """(pods left pending, pods asked for): deployment, self-healing, restarts, scale-ups."""
    asked = rejected = 0
    for e in events:
        d = e.get("detail") or {}
        kind = e["kind"]
        if kind == "deploy":
            asked += sum(len(v) for v in (d.get("placement") or {}).values())
        elif kind == "healed":
            asked += int(d.get("lost", 0))
        elif kind == "restarted":
            asked += 1
        elif kind == "scale" and d.get("to", 0) > d.get("current", 0):
            asked += int(d["to"] - d["current"])
        elif kind == "pending" and d.get("reason") in ("restart", "deploy"):
            asked += 1  # a restart that found no room wrote no 'restarted', a deployment's left it out of its placement
        if kind == "pending":
            rejected += 1
    return rejected, max(asked, rejected)


def run_metrics(placements: list[dict], events: list[dict], nodes: Mapping[str, NodeInfo],
                requests: Mapping[str, tuple[float, float]], t_start: float, t_end: float) -> dict:
    """The time-weighted metrics of a run over [t_start, t_end]."""
    spans = held(placements, t_start, t_end)
    total = sum(dt for _, dt in spans)
    out: dict = {}
    if total > 0:
        snaps = [(snapshot(rec["placement"], nodes, requests), dt) for rec, dt in spans]

        def weighted(key: str) -> float | None:
            vals = [(s[key], dt) for s, dt in snaps if s[key] is not None]
            w = sum(dt for _, dt in vals)
            return round(sum(v * dt for v, dt in vals) / w, 4) if w else None
        services = sorted({s for snap, _ in snaps for s in snap["edge_ratio_by_service"]})
        by_service = {}
        for s in services:
            vals = [(snap["edge_ratio_by_service"][s], dt) for snap, dt in snaps if s in snap["edge_ratio_by_service"]]
            by_service[s] = round(sum(v * dt for v, dt in vals) / sum(dt for _, dt in vals), 4)
        out.update({
            "cost": round(sum(s["cost_per_hour"] * dt for s, dt in snaps) / 3600, 6),
            "cost_per_hour": weighted("cost_per_hour"), "replica_cost": weighted("replica_cost"),
            "edge_ratio": round(float(np.mean(list(by_service.values()))), 4) if by_service else None,
            "edge_ratio_std": round(float(np.std(list(by_service.values()))), 4) if by_service else None,
            "edge_ratio_by_service": by_service,
            "gini_nodes": weighted("gini_nodes"), "gini_sites": weighted("gini_sites"),
            "edge_fragmentation": weighted("edge_fragmentation")})
    rejected, asked = rejections(events)
    out.update({"rejected": rejected, "rejection_rate": round(rejected / asked, 4) if asked else None,
                "migrations": migrations(events, nodes)})
    arrived = sum(e["kind"] == "request-arrival" for e in events)
    refused = sum(e["kind"] == "request-rejected" for e in events)
    if arrived + refused:  # a request stream: HephaestusForge's rejection rate, per request
        out.update({"requests_arrived": arrived + refused, "request_rejection_rate": round(refused / (arrived + refused), 4)})
    return out


def over_time(placements: list[dict], nodes: Mapping[str, NodeInfo], requests: Mapping[str, tuple[float, float]],
              t0: float) -> list[dict]:
    """One row per placement held: its start (s since t0), edge ratio and cost per hour (for plots)."""
    rows = []
    for rec in placements:
        s = snapshot(rec["placement"], nodes, requests)
        rows.append({"t_s": round(float(rec["t"]) - t0, 3), "edge_ratio": s["edge_ratio"],
                     "cost_per_hour": s["cost_per_hour"], "gini_nodes": s["gini_nodes"]})
    return rows


def nodes_of(node_states) -> dict[str, NodeInfo]:
    """From a testbed state's nodes (or anything with name, role, cpus, memory_gb, cost, site)."""
    return {n.name: NodeInfo(n.role, n.cpus, n.memory_gb * 1024, n.cost, n.site) for n in node_states}


def requests_of(app) -> dict[str, tuple[float, float]]:
    return {s: (app.cpu_request(s), app.memory_request(s)) for s in app.services}
