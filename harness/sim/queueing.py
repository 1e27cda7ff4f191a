"""Queueing on top of REACH's model: the latency a placement gives under a known open-loop rate.

REACH's model (``sim.latency``) has no load: a service takes its profiled execution time however
many requests arrive. Here each request rate λ (per second, into the entry services, shared
equally as ``LatencyModel`` shares them) flows through the call graph: service s is visited
v_s times per request (a call with probability p in a group that calls seq_len of its k
services counts p · min(seq_len, k) / k, as the load-free model weighs it), and its replicas
share its arrivals equally (round-robin). Each pod's execution time E then becomes a sojourn
time W, and eqs. 2-9 run on W instead of E. Two disciplines:

- ``node-ps`` (default): a node is one processor-sharing server (M/G/1-PS): every pod on the
  node shares the node's CPU, so W = E / (1 − ρ_node), with ρ_node = Σ over the node's pods of
  their arrival rate × E, over ``capacity`` (1: the node's whole CPU goes to requests, the ideal
  PS server; below 1 when concurrent requests get less of it than one request alone — fitted by
  ``python -m studies.fidelity.open_loop``). Right where a node's CPU share is at most one core and a
  job cannot use more — the local testbed (cgroup bandwidth below one core per node), and any
  cell, whose Python job holds one core at most. PS is insensitive to the service-time
  distribution.
- ``erlang-c``: per (service, node), an M/M/c queue with c = the service's replicas there and
  μ = 1 / E (SIL-GPO, paper 002, eqs. 35-37): W = C(c, λ/μ) / (cμ − λ) + 1/μ. Replicas of other
  services on the node do not slow it down.

A node (or queue) at or beyond saturation gives an infinite latency. The rate a placement can
take at most is ``saturation_rate``.

Closed loops (``closed_latency``; Locust's users each send their next request when the last one
returns) are not Poisson: one user never waits. For them the nodes are processor-sharing
stations of a closed network, solved exactly by mean value analysis (``latency_kernel.mva_stretch``):
each node's work per request stretched by 1 + its mean queue with one user fewer, the request's
time off the CPUs (its network round trips) a delay. One user gives REACH's model unchanged.
"""

from __future__ import annotations

import copy
import numpy as np

from harness.sim.erlang import erlang_c_wait, mmc_sojourn  # noqa: F401  (erlang_c_wait: its old home)
from harness.sim.latency import LatencyModel
from harness.sim.latency_kernel import loaded_times, node_load

DISCIPLINES = ("node-ps", "erlang-c")


def visits(model: LatencyModel, entry: int | None = None) -> np.ndarray:
    """(S,) expected visits of each service per request (entries shared equally; ``entry``, a
    service's index: every request enters there)."""
    v = np.zeros(model.S)
    for e in model.entries if entry is None else [entry]:
        v[e] += 1.0 / (len(model.entries) if entry is None else 1)
    for i in reversed(model.order):  # callers before their callees
        for callees, w in model.groups[i]:
            v[callees] += v[i] * w
    return v


def multiclass_stretch(demand: np.ndarray, think: np.ndarray, users: np.ndarray, tol: float = 1e-9,
                       iterations: int = 10_000) -> np.ndarray:
    """(C, N) how much longer each class's work on each node takes than alone, in a closed network of
    processor-sharing nodes with C classes of users (demand (C, N): ms of work per request of a class
    on each node; think (C,): its time off the CPUs; users (C,)): Schweitzer's approximate mean value
    analysis, R_cn = D_cn (1 + Σ_j Q_jn − Q_cn / N_c), X_c = N_c / (Z_c + Σ_n R_cn), Q_cn = X_c R_cn,
    iterated to a fixed point; the stretch is R_cn / D_cn. A class sees the others' queues and its
    own less the request itself: two loops of one user each wait only behind each other."""
    demand, think, users = (np.asarray(a, float) for a in (demand, think, users))
    Q = users[:, None] * demand / np.maximum(think + demand.sum(axis=1), 1e-12)[:, None]
    for _ in range(iterations):
        seen = Q.sum(axis=0)[None, :] - Q / users[:, None]
        R = demand * (1.0 + seen)
        new = (users / np.maximum(think + R.sum(axis=1), 1e-12))[:, None] * R
        if np.abs(new - Q).max() < tol:
            Q = new
            break
        Q = new
    return 1.0 + Q.sum(axis=0)[None, :] - Q / users[:, None]


def loaded_execution(model: LatencyModel, X: np.ndarray, load: float, closed: bool = False, knee: float = 1.0,
                     capacity: float = 1.0, v: np.ndarray | None = None) -> np.ndarray:
    """(S, N) execution times under ``load``: open-loop requests/s (node-ps; inf on a saturated node
    with ``knee`` 1), or with ``closed`` that many closed-loop users (mean value analysis; 1 user:
    the load-free times). ``latency_kernel.loaded_times`` says how. ``v``: ``visits(model)``, when known."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    out = np.empty_like(X)
    loaded_times(X, np.ascontiguousarray(model.E, dtype=np.float64), *model.rtt, model.user_rtt, *model.graph,
                 visits(model) if v is None else v, float(load), closed, knee, capacity, out)
    return out


def replica_share(X: np.ndarray) -> np.ndarray:
    """(S, N) the share of a service's arrivals each node gets: its replicas share them equally."""
    X = np.asarray(X, float)
    return X / X.sum(axis=1, keepdims=True)


class QueueingModel:
    def __init__(self, model: LatencyModel, discipline: str = "node-ps", capacity: float = 1.0):
        if discipline not in DISCIPLINES:
            raise ValueError(f"discipline must be one of {', '.join(DISCIPLINES)}")
        if not 0 < capacity <= 1:
            raise ValueError("capacity must be in (0, 1]")
        self.model, self.discipline, self.capacity = model, discipline, capacity
        self.v = visits(model)

    def arrivals(self, X: np.ndarray, rate: float) -> np.ndarray:
        """(S, N) requests per second reaching each (service, node)."""
        return rate * self.v[:, None] * replica_share(X)

    def sojourn_ms(self, X: np.ndarray, rate: float) -> np.ndarray:
        """(S, N) mean time a request spends in each (service, node)'s job, waiting included."""
        X = np.asarray(X, float)
        E, lam = self.model.E, self.arrivals(X, rate)
        if self.discipline == "node-ps":
            return loaded_execution(self.model, X, rate, capacity=self.capacity, v=self.v)
        W = np.array(E, float)
        s, n = np.nonzero(X)
        c, mu, rate = X[s, n], 1000 / E[s, n], lam[s, n]
        stable = rate < c * mu
        W[s[stable], n[stable]] = mmc_sojourn(c[stable], rate[stable], mu[stable]) * 1000
        W[s[~stable], n[~stable]] = np.inf
        return W

    def node_load(self, X: np.ndarray, rate: float) -> np.ndarray:
        """(N,) ρ per node under ``rate``: the share of time its CPU is busy (node-ps).

        Callees a request calls in parallel (a caller's groups) that share a node run at once and
        share its CPU, so each one's execution time already holds the others' work: the node is
        busy for the longest of them, not their sum (with PS, two jobs of work a ≥ b started
        together take a + b and 2b). Summing them would count the overlap twice."""
        g, busy = self.model.graph, np.empty(np.shape(X)[1])
        node_load(np.ascontiguousarray(X, dtype=np.float64), np.ascontiguousarray(self.model.E, dtype=np.float64),
                  self.v, float(rate), g.grp_ptr, g.call_ptr, g.callee, g.weight, busy)  # the one compiled rule
        return busy / 1000 / self.capacity

    def at_rest(self, X: np.ndarray, rate: float) -> LatencyModel:
        """The model whose execution times were measured (as sojourn times W) on placement ``X`` under
        ``rate``, with the node-ps waiting taken out: a request's time on nodes otherwise idle. With
        R = Σ λ·W / capacity over a node's pods, W = E / (1 − ρ) gives E = W / (1 + R)."""
        rest = copy.copy(self.model)
        rest.E = self.model.E / (1 + self.node_load(X, rate))[None, :]
        return rest

    def latency(self, X: np.ndarray, rate: float) -> float:
        """D_msa under ``rate`` requests per second (inf when a node or queue saturates)."""
        return float(self.model.terms(X, E=self.sojourn_ms(X, rate))["D_msa"][0])

    def closed_execution(self, X: np.ndarray, users: int | dict[int | None, int], entry: int | None = None) -> np.ndarray:
        """(S, N) each job's time, waiting included, for a request entering at service ``entry`` (an
        index; None: at every entry with equal chance) with ``users`` closed-loop users all entering
        there (node-ps nodes, exact mean value analysis; 1 user: the load-free times). ``users`` may
        be {entry: users} of several closed loops at once (apps deployed together, each with its own
        users): a network of one class per loop (``multiclass_stretch``), ``entry``'s class's times."""
        mix = {e: u for e, u in (users if isinstance(users, dict) else {entry: users}).items() if u > 0}
        if len(mix) <= 1:
            e, u = next(iter(mix.items()), (entry, 0))
            v = self.v if e is None else visits(self.model, e)
            return loaded_execution(self.model, X, u, closed=True, capacity=self.capacity, v=v)
        X = np.asarray(X, float)
        classes = list(mix)
        demand, think = np.empty((len(classes), X.shape[1])), np.empty(len(classes))
        g, E, free = self.model.graph, np.ascontiguousarray(self.model.E, dtype=np.float64), self.model.terms(X)
        for c, e in enumerate(classes):
            v = self.v if e is None else visits(self.model, e)
            node_load(np.ascontiguousarray(X), E, v, 1.0, g.grp_ptr, g.call_ptr, g.callee, g.weight, demand[c])
            demand[c] /= self.capacity  # ms of a node's CPU per request of this class
            think[c] = max(0.0, float(self.model.request_ms(X, free, e)[0]) - demand[c].sum())
        stretch = multiclass_stretch(demand, think, np.array([mix[e] for e in classes], float))
        return self.model.E * stretch[classes.index(entry) if entry in classes else 0][None, :]

    def closed_latency(self, X: np.ndarray, users: int, entry: int | None = None) -> float:
        """D_msa with ``users`` closed-loop users, each sending its next request when the last one
        returns (``closed_execution``; 1 user: REACH's load-free model); ``entry``: the latency of
        a request entering at that service, its users all entering there."""
        return float(self.model.request_ms(X, self.model.terms(X, E=self.closed_execution(X, users, entry)), entry)[0])

    def saturation_rate(self, X: np.ndarray) -> float:
        """The request rate at which the busiest node (node-ps) or queue (erlang-c) saturates."""
        X = np.asarray(X, float)
        if self.discipline == "node-ps":
            return float(1 / self.node_load(X, 1.0).max())
        per_request = self.arrivals(X, 1.0) * self.model.E / 1000  # busy seconds per request
        return float(1 / (per_request[X > 0] / X[X > 0]).max())
