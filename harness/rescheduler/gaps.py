"""Optimality gaps in simulation: for a scenario and pod count, the exact optimum of REACH's
model (``harness.solvers.reach_milp``) where HiGHS finishes within the time limit, otherwise
its proven bound and the best placement known (the solver's or any policy's), labelled so."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.policies.contract import ClusterView
from harness.solvers import reach_milp


def problem_of(view: ClusterView, replicas: dict[str, int]) -> reach_milp.ReachProblem:
    """Place ``replicas`` pods per service on the view's nodes, after what is not a listed pod."""
    mdl = view.model
    cpu = np.array([view.request(s)[0] for s in mdl.services])
    mem = np.array([view.request(s)[1] for s in mdl.services])
    allowed = np.array([[view.up[n] and view.app.may_run_on(s, node.name) for n, node in enumerate(view.nodes)]
                        for s in mdl.services])
    spread = np.array([view.app.spreads(s) for s in mdl.services])
    return reach_milp.ReachProblem(mdl, np.array([replicas[s] for s in mdl.services]),
                                   view.cap_cpu - view.background_cpu, view.cap_memory_mib - view.background_memory_mib,
                                   cpu, mem, allowed, spread)


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
