"""Paper 003's MILP (eqs. 1-7) on HiGHS.

x[v, k] = 1 when microservice k (flat, app by app) runs on node v; θ_a ≥ 0 per app.

    min  w · Σ_k Σ_v (o_v + n_v s_k) x[v,k] + (1 − w) · Σ_a θ_a          (1, 6)
    Σ_v x[v,k] = 1                                                        (2)
    arc (i → j, λ), each v:  x[v,i] + Σ_{v': l(v,v') > λ} x[v',j] ≤ 1      (3)
    Σ_k ε_k x[v,k] ≤ c_v,   Σ_k ρ_k x[v,k] ≤ r_v                         (4, 5)
    θ_a ≥ Σ_v l(π_a, v) x[v,k]   for each microservice k of app a        (7, summed)

Eq. 3 as printed has one row per pair (v, v'); summed over v' (the x[·,j] add up to 1) it
allows exactly the same integer points with |V| times fewer rows and a tighter relaxation.
Eq. 7 as printed, θ_a ≥ l(π_a, v)·x[v,k] for each v, is what ``theta="printed"`` builds; summing
over v gives the same integer solutions (exactly one x[·,k] is 1) and a tighter relaxation
(``theta="summed"``, the default; ``python -m studies.rollout.paper theta`` measures both: 1.6-2.2×
faster to the optimum on 10-app basic instances here).
"""

from __future__ import annotations

import time

import numpy as np

from harness.families.rollout.world import Instance, Outcome
from harness.solvers.milp import Milp


def build(inst: Instance, theta: str = "summed") -> tuple[Milp, np.ndarray, np.ndarray]:
    """The model, x's columns (V, K) and θ's columns (A,)."""
    if theta not in ("summed", "printed"):
        raise ValueError("theta must be 'summed' or 'printed'")
    inf, f = inst.infra, inst.flat
    V, K, A = inf.V, len(f.cpu), len(f.source)
    m = Milp()
    unit = inst.w * (inf.op_cost[:, None] + inf.net_cost[:, None] * f.data[None, :])  # (V, K)
    x = m.add_vars(V * K, unit.ravel(), 0, 1, integer=True).reshape(V, K)
    th = m.add_vars(A, 1 - inst.w, 0)
    for k in range(K):
        alone = (inf.cpu >= f.cpu[k] - 1e-9) & (inf.ram >= f.ram[k] - 1e-9)  # a node too small even for k alone
        m.add_row(x[alone, k], 1.0, 1.0, 1.0)
        for v in np.flatnonzero(~alone):
            m.upper[x[v, k]] = 0.0
    for k in range(K):
        for e in range(f.arc_start[k], f.arc_start[k + 1]):
            i, lam = f.arc_other[e], f.arc_lambda[e]
            far = inf.delay > lam + 1e-9  # (V, V): l(v, v') > λ
            for v in range(V):
                if far[v].any():
                    m.add_row(np.concatenate([[x[v, i]], x[far[v], k]]), 1.0, hi=1.0)
    for v in range(V):
        m.add_row(x[v], f.cpu, hi=float(inf.cpu[v]))
        m.add_row(x[v], f.ram, hi=float(inf.ram[v]))
    for a in range(A):
        l = inf.delay[f.source[a]]
        for k in range(f.app_start[a], f.app_start[a + 1]):
            if theta == "summed":
                m.add_row(np.concatenate([[th[a]], x[:, k]]), np.concatenate([[1.0], -l]), lo=0.0)
            else:
                for v in np.flatnonzero(l > 0):
                    m.add_row([th[a], x[v, k]], [1.0, -l[v]], lo=0.0)
    return m, x, th


def solve(inst: Instance, time_limit: float = 60.0, start: list[np.ndarray] | None = None,
          theta: str = "summed") -> Outcome:
    """The optimum (status "optimal"), or the best found and the bound at the time limit.
    ``start``: a complete feasible assignment (e.g. the rollout's) to begin from."""
    t0 = time.monotonic()
    m, x, th = build(inst, theta)
    f = inst.flat
    x0 = None
    if start is not None and all((np.asarray(s) >= 0).all() for s in start):
        flat = np.concatenate(start)
        x0 = np.zeros(m.shape[1])
        x0[x[flat, np.arange(len(flat))]] = 1.0
        for a in range(len(f.source)):
            x0[th[a]] = inst.infra.delay[f.source[a], flat[f.app_start[a]:f.app_start[a + 1]]].max()
    sol = m.solve(time_limit, x0)
    if sol.values is None:
        assign = [np.full(len(a.cpu), -1) for a in inst.apps]
        return Outcome("milp", assign, time.monotonic() - t0, {"objective": float("inf")}, sol.bound, sol.status)
    flat = np.argmax(sol.values[x].reshape(x.shape), axis=0)
    assign = f.split(flat)
    return Outcome("milp", assign, time.monotonic() - t0, inst.evaluate(assign), sol.bound, sol.status)
