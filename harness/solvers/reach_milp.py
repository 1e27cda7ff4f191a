"""REACH's latency model (``harness.sim.latency``, eqs. 2-9) minimised exactly as a MILP on HiGHS:
the best placement of a given number of replicas per service, with capacity, node affinity and
anti-affinity — the reference the other policies' gaps are measured against where the
exhaustive ``optimal`` policy gives up (beyond 2·10⁷ placements).

X[s,n] ∈ {0..r_s} replicas of s on n, r_s fixed. The model is linear in X except the call
delays D_S[i,j] = Σ_{n,m} D[n,m] X[i,n] X[j,m] / (r_i r_j). The product is made exact with a
one-hot b[i,n,k] = [X[i,n] = k] and z[i,n,k,j,m] = b[i,n,k] · X[j,m]:

    X[i,n] = Σ_k k b[i,n,k],  Σ_k b[i,n,k] ≤ 1,  z ≥ X[j,m] − r_j (1 − b[i,n,k]),  z ≥ 0
    X[i,n] X[j,m] = Σ_k k z[i,n,k,j,m]

z needs no upper bounds: every D_S enters the objective with a non-negative weight, so the
minimum puts z at its lower bound, the product. The max over a service's call groups (eq. 7) is
an epigraph: T_S[i] ≥ T_E[i] + Σ_j w_j (D_S[i,j] + T_S[j]) for every group.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.sim.latency import LatencyModel
from harness.solvers.milp import Milp, Solution


@dataclass
class ReachProblem:
    model: LatencyModel
    replicas: np.ndarray  # (S,) pods per service (≥ 1 each)
    room_cpu: np.ndarray  # (N,) cores left after everything that is not being placed
    room_memory_mib: np.ndarray  # (N,)
    cpu: np.ndarray  # (S,) cores a pod of each service requests
    memory_mib: np.ndarray  # (S,)
    allowed: np.ndarray  # (S, N) up and permitted by node affinity
    spread: np.ndarray  # (S,) bool: pod anti-affinity (at most one replica per node)


@dataclass
class ReachSolution:
    counts: np.ndarray | None  # (S, N) the best placement found
    latency_ms: float  # its latency by the model (inf without one)
    bound_ms: float  # no placement does better
    status: str
    seconds: float

    @property
    def exact(self) -> bool:
        return self.status == "optimal"


def build(p: ReachProblem) -> tuple[Milp, np.ndarray]:
    mdl = p.model
    S, N = mdl.S, len(mdl.topo.nodes)
    r = np.asarray(p.replicas, int)
    m = Milp()
    X = np.empty((S, N), np.int64)
    for s in range(S):
        for n in range(N):
            ub = 0 if not p.allowed[s, n] else (1 if p.spread[s] else r[s])
            X[s, n] = m.add_vars(1, 0.0, 0, ub, integer=True)[0]
        m.add_row(X[s], 1.0, r[s], r[s])
    for n in range(N):
        m.add_row(X[:, n], p.cpu, hi=float(p.room_cpu[n]) + 1e-9)
        m.add_row(X[:, n], p.memory_mib, hi=float(p.room_memory_mib[n]) + 1e-9)
    callers = sorted({i for i, _ in mdl.edges})
    onehot = {}
    for i in callers:
        for n in range(N):
            b = m.add_vars(r[i], 0.0, 0, 1, integer=True)
            onehot[i, n] = b
            m.add_row(np.concatenate([[X[i, n]], b]), np.concatenate([[1.0], -np.arange(1, r[i] + 1)]), 0.0, 0.0)
            m.add_row(b, 1.0, hi=1.0)
    # D_S[i,j] as a variable equal to its linear expression in z
    DS = {}
    for i, j in mdl.edges:
        d = m.add_vars(1, 0.0, 0)[0]
        cols, coefs = [d], [-1.0]
        for n in range(N):
            for mm in range(N):
                if mdl.D[n, mm] <= 0:
                    continue
                for k in range(1, r[i] + 1):
                    z = m.add_vars(1, 0.0, 0)[0]
                    m.add_row([z, X[j, mm], onehot[i, n][k - 1]], [1.0, -1.0, -r[j]], lo=-r[j])
                    cols.append(z)
                    coefs.append(k * mdl.D[n, mm] / (r[i] * r[j]))
        m.add_row(cols, coefs, 0.0, 0.0)
        DS[i, j] = d
    T = m.add_vars(S, 0.0, 0)
    for i in range(S):
        te_cols, te_coefs = list(X[i]), list(-mdl.E[i] / r[i])
        groups = mdl.groups[i] or [(np.array([], int), np.array([]))]
        for callees, w in groups:
            cols, coefs = [T[i]] + te_cols, [1.0] + te_coefs
            for j, wj in zip(callees, w):
                cols += [DS[i, int(j)], T[int(j)]]
                coefs += [-wj, -wj]
            m.add_row(cols, coefs, lo=0.0)
    e = len(mdl.entries)
    for g in mdl.entries:
        m.cost[T[g]] += 1.0 / e
        for n in range(N):
            m.cost[X[g, n]] += mdl.topo.user_rtt[n] / r[g] / e
    return m, X


def solve(p: ReachProblem, time_limit: float = 10.0) -> ReachSolution:
    m, X = build(p)
    sol: Solution = m.solve(time_limit)
    if sol.values is None:
        return ReachSolution(None, float("inf"), sol.bound, sol.status, sol.seconds)
    counts = np.rint(sol.values[X]).astype(int)
    lat = float(p.model.latency(counts)[0])
    return ReachSolution(counts, lat, min(sol.bound, lat), sol.status, sol.seconds)
