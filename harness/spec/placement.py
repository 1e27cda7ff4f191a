"""Placement: service -> list of node names, one entry per replica (YAML or JSON)."""

from __future__ import annotations

from pathlib import Path

from harness.errors import UserError
from harness.spec.app import App
from harness.spec.loader import read_document

Placement = dict[str, list[str]]


def check_placement(placement: Placement, app: App, nodes: list[str], source: str) -> Placement:
    if not isinstance(placement, dict):
        raise UserError("expected an object: service -> list of node names", source=source)
    for service, where in placement.items():
        if service not in app.services:
            raise UserError(f"unknown service {service!r} (services: {', '.join(app.services)})", source=source, field=service)
        if not isinstance(where, list) or not where or not all(isinstance(n, str) for n in where):
            raise UserError("expected a non-empty list of node names, one per replica", source=source, field=service)
        for i, node in enumerate(where):
            if node not in nodes:
                raise UserError(f"unknown node {node!r} (nodes: {', '.join(nodes)})", source=source, field=f"{service}[{i}]")
    missing = [s for s in app.services if s not in placement]
    if missing:
        raise UserError(f"no nodes for service(s) {', '.join(missing)}", source=source)
    problem = app.constraint_problem(placement)
    if problem:
        raise UserError(problem[1], source=source, field=problem[0])
    return {s: list(placement[s]) for s in app.services}


def load_placement(path: str | Path, app: App, nodes: list[str]) -> Placement:
    return check_placement(read_document(path), app, nodes, str(path))


def spread_placement(app: App, nodes: list[tuple[str, str, float]]) -> Placement:
    """A simple starting placement: each replica on the non-client node with the smallest share of
    its CPU requested so far (Kubernetes' LeastAllocated), replicas of a service on distinct nodes
    while there are enough, on the nodes its node_affinity allows. ``nodes``: (name, role, cpus). Policies replace this later."""
    candidates = [(n, c) for n, role, c in nodes if role != "client"]
    used = {n: 0.0 for n, _ in candidates}
    cap = dict(candidates)
    out: Placement = {}
    for service, spec in app.services.items():
        out[service] = []
        for _ in range(spec.replicas):
            allowed = [nc for nc in candidates if app.may_run_on(service, nc[0])]
            order = sorted(allowed, key=lambda nc: (nc[0] in out[service], used[nc[0]] / cap[nc[0]]))
            node = order[0][0]
            out[service].append(node)
            used[node] += app.cpu_request(service)
    return out
