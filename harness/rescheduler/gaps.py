"""Optimality gaps in simulation: for a scenario and pod count, the exact optimum of REACH's
model (``harness.solvers.reach_milp``) where HiGHS finishes within the time limit, otherwise
its proven bound and the best placement known (the solver's or any policy's), labelled so."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.policies.contract import ClusterView
from harness.rescheduler.evaluate import SimWorld, scenario
from harness.solvers import reach_milp


def problem_of(view: ClusterView, replicas: dict[str, int]) -> reach_milp.ReachProblem:
    """Place ``replicas`` pods per service on the view's nodes, after what is not a listed pod."""
    mdl = view.model
    cpu = np.array([view.request(s)[0] for s in mdl.services])
    mem = np.array([view.request(s)[1] for s in mdl.services])
    spread = np.array([view.app.spreads(s) for s in mdl.services])
    return reach_milp.ReachProblem(mdl, np.array([replicas[s] for s in mdl.services]),
                                   view.cap_cpu - view.background_cpu, view.cap_memory_mib - view.background_memory_mib,
                                   cpu, mem, view.placeable(), spread)


@dataclass
class Reference:
    """What a policy's latency is compared with on one scenario."""

    latency_ms: float  # the optimum (exact) or the best placement known
    bound_ms: float  # the proven lower bound (= latency_ms when exact)
    exact: bool
    seconds: float

    def gaps(self, latency_ms: float) -> tuple[float, float]:
        """(gap to the best known or the optimum, gap to the bound): equal when exact."""
        return latency_ms / self.latency_ms - 1, latency_ms / self.bound_ms - 1


def reference(view: ClusterView, replicas: dict[str, int], time_limit: float, known: list[float]) -> Reference:
    """``known``: latencies of placements the policies reached on this scenario."""
    sol = reach_milp.solve(problem_of(view, replicas), time_limit)
    best = min([sol.latency_ms] + [k for k in known if k is not None])
    return Reference(best, sol.bound_ms if not sol.exact else sol.latency_ms, sol.exact, sol.seconds)


@dataclass
class Gap:
    gap: float  # mean over scenarios, to the optimum (exact) or to the best placement known
    gap_to_bound: float  # mean over scenarios, to the proven bound: ≥ the true gap
    reference: str  # "optimum" when every scenario was solved exactly, else "bound"


def gaps(dyn, pods: int, seeds: list[int], finals: dict[str, list[dict]], time_limit: float,
         progress=lambda: None) -> dict[str, Gap]:
    """Each policy's gap on these scenarios. ``finals``: per policy, each scenario's final
    placement (service -> nodes), as ``run_policy`` collects them."""
    mdl = dyn.model
    replicas = {s: pods // dyn.S for s in mdl.services}

    def latency(placement: dict) -> float | None:
        if any(len(placement.get(s, [])) != replicas[s] for s in mdl.services):
            return None  # pods left pending: not the same problem
        return float(mdl.latency(mdl.counts(placement))[0])
    per: dict[str, list[tuple[float, float]]] = {p: [] for p in finals}
    exact = True
    for k, seed in enumerate(seeds):
        lat = {p: latency(f[k]) for p, f in finals.items()}
        ref = reference(SimWorld(dyn, scenario(dyn, pods, seed)).view(), replicas, time_limit, list(lat.values()))
        exact &= ref.exact
        for p, l in lat.items():
            if l is not None:
                per[p].append(ref.gaps(l))
        progress()
    return {p: Gap(float(np.mean([g for g, _ in v])), float(np.mean([b for _, b in v])),
                   "optimum" if exact else "bound") for p, v in per.items() if len(v) == len(seeds)}
