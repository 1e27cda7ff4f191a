"""Paper 003's placement problem read from a cluster view: the one ground's form of
:mod:`harness.families.rollout.world`.

A view holds paper 003's problem when its app declares ``sources`` (the node each entry's data
come from): each sourced entry and the services it reaches are one app of the instance, in call
order (a caller before its callees), every service with one replica. The nodes are the view's
(capacity less what is used by anything outside the apps being placed; a node down has none);
o_v and n_v are the node types' ``pod_cost`` and ``data_cost``; the delay l between two nodes is
half their RTT (one way); a call's cap λ is its group's ``max_delay_ms``; ε, ρ, s are a pod's CPU
request (cores), memory request (GiB) and ``data_size``; w is the app's ``cost_weight``.

The compiled greedy and rollout (``families.rollout.rollout``) and the MILP (``families.rollout.milp``)
solve the instance built here, and a run's summary scores its placement with :func:`score`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from harness.policies.contract import ClusterView, PendingPod
from harness.families.rollout.world import LAYERS, AppSpec, Infrastructure, Instance
from harness.spec.app import App
from harness.scenarios import extras


@dataclass(frozen=True)
class Problem:
    """An instance over some of the view's apps, and how its indices map back."""

    instance: Instance
    services: tuple[tuple[str, ...], ...]  # per instance app, its services in the instance's order

    def nodes_of(self, view: ClusterView, assign: list[np.ndarray]) -> dict[str, str | None]:
        """Service -> node name (None: its app was not placed)."""
        out: dict[str, str | None] = {}
        for names, x in zip(self.services, assign):
            for name, n in zip(names, np.asarray(x)):
                out[name] = None if n < 0 else view.nodes[int(n)].name
        return out


def apps_of(app: App) -> dict[str, tuple[str, ...]] | None:
    """Entry -> its services in call order, when ``app`` is paper 003's problem (it has sources;
    every service belongs to one sourced entry and has one replica); else None."""
    if not app.sources:
        return None
    out: dict[str, tuple[str, ...]] = {}
    owner: dict[str, str] = {}
    for entry in app.entry_services():
        if entry not in app.sources:
            continue
        order = _call_order(app, entry)
        for s in order:
            if s in owner or app.services[s].replicas != 1:
                return None  # shared between apps, or replicated: not paper 003's problem
            owner[s] = entry
        out[entry] = order
    return out if len(owner) == len(app.services) else None


def _call_order(app, entry: str) -> tuple[str, ...]:
    """The services ``entry`` reaches, each after every service of this app that calls it."""
    reach, stack = [], [entry]
    while stack:
        s = stack.pop()
        if s not in reach:
            reach.append(s)
            stack.extend(reversed(app.callees(s)))
    done: list[str] = []

    def visit(s: str) -> None:  # a post-order over callers, so callers come first
        if s in done:
            return
        for caller in reach:
            if s in app.callees(caller):
                visit(caller)
        done.append(s)
    for s in reach:
        visit(s)
    return tuple(done)


def problem(view: ClusterView, entries: Sequence[str] | None = None) -> Problem | None:
    """The instance of ``entries`` (default every sourced app) placed anew on the view's nodes:
    capacity is each node's less the background and the pods of the other apps."""
    apps = apps_of(view.app)
    if apps is None:
        return None
    chosen = [e for e in apps if entries is None or e in entries]
    mine = {s for e in chosen for s in apps[e]}
    cpu, mem = view.background_cpu.copy(), view.background_memory_mib.copy()
    for p in view.pods:
        if p.service not in mine:
            i = view.index(p.node)
            cpu[i] += p.cpu
            mem[i] += p.memory_mib
    up = view.up.astype(bool)
    layer = np.array([LAYERS.index(n.tier) if n.tier in LAYERS else 0 for n in view.nodes])
    infra = Infrastructure(layer, np.where(up, view.cap_cpu - cpu, 0.0), np.where(up, (view.cap_memory_mib - mem) / 1024, 0.0),
                           np.array([n.pod_cost for n in view.nodes]), np.array([n.data_cost for n in view.nodes]),
                           view.rtt / 2)
    a = view.app
    specs = []
    for e in chosen:
        names = apps[e]
        at = {s: i for i, s in enumerate(names)}
        arcs = tuple((at[s], at[c], float(ms)) for s in names for g in a.services[s].external_services
                     for c, ms in (g.max_delay_ms or {}).items())
        specs.append(AppSpec(view.index(a.sources[e]), np.array([a.cpu_request(s) for s in names]),
                             np.array([a.memory_request(s) / 1024 for s in names]),
                             np.array([a.services[s].data_size or 0.0 for s in names]), arcs))
    return Problem(Instance(infra, tuple(specs), a.weight()), tuple(apps[e] for e in chosen))


def place(view: ClusterView, pods: Sequence[PendingPod], solve) -> list[str | None] | None:
    """Paper 003's way to place ``pods``: the apps they belong to solved as one instance by
    ``solve(instance) -> assign``, on the room the other apps leave; None when the view is not
    paper 003's problem or a pod's app has pods placed already (then the caller's own way)."""
    apps = apps_of(view.app)
    if apps is None:
        return None
    owner = {s: e for e, names in apps.items() for s in names}
    entries = list(dict.fromkeys(owner[p.service] for p in pods))
    if any(view.pods_of(s) for e in entries for s in apps[e]):
        return None
    prob = problem(view, entries)
    where = prob.nodes_of(view, solve(prob.instance))
    return [where[p.service] for p in pods]


def score(view: ClusterView, gap_time_limit_s: float = 0.0) -> dict | None:
    """Paper 003's objective of the view's placement (``Instance.evaluate``, not strict): over the
    apps placed whole, with the arcs whose delay cap is broken counted; None if not the problem.
    With ``gap_time_limit_s`` and every app placed, its gap too (:func:`gap`)."""
    prob = problem(view)
    if prob is None:
        return None
    placed = {p.service: view.index(p.node) for p in view.pods}
    assign = [np.array([placed.get(s, -1) for s in names]) for names in prob.services]
    assign = [x if (x >= 0).all() else np.full(len(x), -1) for x in assign]
    out = prob.instance.evaluate(assign, strict=False)
    if gap_time_limit_s > 0 and not out["rejected"]:
        out |= gap(prob.instance, out["objective"], gap_time_limit_s)
    return out


_REFERENCES: dict[tuple, tuple[float, bool]] = {}  # instance -> (optimum or bound, exact), solved once a process


def gap(inst: Instance, objective: float, time_limit_s: float) -> dict:
    """``objective``'s gap to the optimum of ``inst`` where HiGHS proves it within
    ``time_limit_s``, else to its proven bound (an upper estimate of the true gap). The MILP is
    solved once per instance and process, whatever the policies and seeds."""
    from harness.families.rollout import milp as multiapp_milp

    f, inf = inst.flat, inst.infra
    key = tuple(a.tobytes() for a in (inf.cpu, inf.ram, inf.op_cost, inf.net_cost, inf.delay, f.cpu, f.ram, f.data,
                                      f.source, f.arc_other, f.arc_lambda)) + (inst.w, time_limit_s)
    if key not in _REFERENCES:
        sol = multiapp_milp.solve(inst, time_limit_s)
        _REFERENCES[key] = (sol.objective if sol.status == "optimal" else sol.bound, sol.status == "optimal")
    ref, exact = _REFERENCES[key]
    return {"gap": objective / ref - 1 if ref > 0 else None, "gap_reference": "optimum" if exact else "bound"}


extras.register(extras.RunExtra("cost_delay", lambda app: apps_of(app) is not None, score))
