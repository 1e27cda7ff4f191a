"""REACH's end-to-end latency model (eqs. 2-9) as functions of a batch of placements.

A placement is a replica-count matrix X[s, n] (how many pods of service s run on node n), or a
batch of them X[b, s, n]. With E[s, n] the profiled execution time of s on n's node type and
D[n, m] the node-to-node round-trip time:

  T_E[s]    = sum_n X[s,n] E[s,n] / sum_n X[s,n]                       (eq. 2)
  D_S[i,j]  = sum_{n,m} X[i,n] D[n,m] X[j,m] / (|i| |j|)                (eqs. 3-4)
  T_ij      = D_S[i,j] + T_S[j]                                          (eq. 5)
  T_G[g]    = sum_{j in g} w_gj T_ij                                     (eq. 6)
  T_S[i]    = T_E[i] + max_g T_G[g]      (0 without groups)              (eq. 7)
  D_gateway = mean over gateway replicas of D[user, n]                   (eq. 8)
  D_msa     = D_gateway + T_S[gateway]                                   (eq. 9)

With several entry services (apps deployed together, or one app that users call at several
services), D_msa is the mean over the entries of each one's eq. 9: the latency of a request
that enters at any of them with equal chance.

Extension (not in the paper): a call made with probability p, and a group that calls only
``seq_len`` of its k services at random (μBench), enter the group's sum with the expected
weight w_gj = p_j * min(seq_len, k) / k, so the model gives the expected latency.
A call costs one round trip, so D is the RTT matrix (the profile's measured one by default), held
per group of nodes (``Topology``): D[n, m] is the table's entry for n's and m's groups.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.sim.latency_kernel import batch_terms, batch_terms_links, graph
from harness.spec.app import App


@dataclass(frozen=True)
class Topology:
    """Placement targets and the user, as arrays the model indexes. The RTTs between nodes are
    held per group of nodes (``harness.spec.rtt``): ``rtt_group`` (N,) each node's group,
    ``rtt_table`` (K, K) the RTT between two distinct nodes of two groups, ``rtt_self`` (K,) a
    node's to itself; or given as the dense ``rtt`` (N, N), each node its own group."""

    nodes: tuple[str, ...]  # nodes pods may run on
    node_types: tuple[str, ...]
    tiers: tuple[str, ...]
    cpus: np.ndarray  # (N,)
    memory_mib: np.ndarray  # (N,)
    rtt: np.ndarray | None  # (N, N) ms between placement nodes; None: built from the groups when asked (dense_rtt)
    user_rtt: np.ndarray  # (N,) ms between the user (client nodes, averaged) and each node
    roles: tuple[str, ...] = ()  # cloud | edge per node (default: the tier)
    sites: tuple[str | None, ...] = ()
    costs: np.ndarray | None = None  # (N,) per hour
    gpus: np.ndarray | None = None  # (N,)
    pod_costs: np.ndarray | None = None  # (N,) paper 003's o_v: per pod hosted
    data_costs: np.ndarray | None = None  # (N,) paper 003's n_v: per unit of a pod's data
    rtt_group: np.ndarray | None = None  # (N,) int
    rtt_table: np.ndarray | None = None  # (K, K)
    rtt_self: np.ndarray | None = None  # (K,)

    def __post_init__(self):
        n = len(self.nodes)
        for name in ("pod_costs", "data_costs"):
            if getattr(self, name) is None:
                object.__setattr__(self, name, np.zeros(n))
        if not self.roles:
            object.__setattr__(self, "roles", tuple(self.tiers))
        if not self.sites:
            object.__setattr__(self, "sites", (None,) * n)
        if self.costs is None:
            object.__setattr__(self, "costs", np.zeros(n))
        if self.gpus is None:
            object.__setattr__(self, "gpus", np.zeros(n))
        if self.rtt_table is None:  # a dense matrix: every node its own group
            rtt = np.ascontiguousarray(self.rtt, dtype=np.float64)
            object.__setattr__(self, "rtt_group", np.arange(n, dtype=np.int64))
            object.__setattr__(self, "rtt_table", rtt)
            object.__setattr__(self, "rtt_self", np.ascontiguousarray(np.diag(rtt)))
        for name, kind in (("rtt_group", np.int64), ("rtt_table", np.float64), ("rtt_self", np.float64)):
            object.__setattr__(self, name, np.ascontiguousarray(getattr(self, name), dtype=kind))

    def dense_rtt(self) -> np.ndarray:
        """(N, N) every pair's RTT (N² numbers: for the callers that need them all)."""
        if self.rtt is None:
            g = self.rtt_group
            d = self.rtt_table[np.ix_(g, g)]
            d[np.arange(len(g)), np.arange(len(g))] = self.rtt_self[g]
            object.__setattr__(self, "rtt", d)
        return self.rtt

    def max_rtt(self) -> float:
        """The largest RTT of any pair (a node with itself included), as ``dense_rtt().max()``."""
        if not len(self.nodes):
            return 0.0
        size = np.bincount(self.rtt_group, minlength=len(self.rtt_self))
        used = size > 0
        table = self.rtt_table.copy()
        table[np.arange(len(size)), np.arange(len(size))] = np.where(size > 1, np.diag(self.rtt_table), -np.inf)
        return float(max(table[np.ix_(used, used)].max(), self.rtt_self[used].max()))


class LatencyModel:
    def __init__(self, app: App, execution_ms: dict[str, dict[str, float]], topo: Topology):
        self.app, self.topo = app, topo
        self.services = list(app.services)
        self.index = {s: i for i, s in enumerate(self.services)}
        self.gateway = self.index[app.gateway]
        self.entries = [self.index[e] for e in app.entry_services()]
        S = len(self.services)
        self.E = np.array([[execution_ms[s][t] for t in topo.node_types] for s in self.services], dtype=float)
        self.rtt = (topo.rtt_table, topo.rtt_self, topo.rtt_group)  # the compiled kernels' RTTs (latency_kernel.rtt)
        # groups: per service, a list of (callee indices, weights)
        self.groups: list[list[tuple[np.ndarray, np.ndarray]]] = []
        for s in self.services:
            gs = []
            for g in app.services[s].external_services:
                if not g.services:
                    continue
                share = min(g.seq_len, len(g.services)) / len(g.services)
                callees = np.array([self.index[c] for c in g.services])
                w = np.array([g.probabilities.get(c, 1.0) * share for c in g.services])
                gs.append((callees, w))
            self.groups.append(gs)
        self.order = self._callees_first()
        self.edges = sorted({(i, int(j)) for i, gs in enumerate(self.groups) for cs, _ in gs for j in cs})
        self.S = S
        self.graph = graph(self.groups, self.order, self.edges, self.entries)  # the compiled kernel's view
        self.user_rtt = np.ascontiguousarray(topo.user_rtt, dtype=np.float64)

    @property
    def D(self) -> np.ndarray:
        """(N, N) every node pair's RTT, dense (``Topology.dense_rtt``): what small-world callers
        index; the compiled kernels read the groups (``rtt``)."""
        return self.topo.dense_rtt()

    def _callees_first(self) -> list[int]:
        seen, out = set(), []

        def visit(i: int) -> None:
            if i in seen:
                return
            seen.add(i)
            for cs, _ in self.groups[i]:
                for j in cs:
                    visit(int(j))
            out.append(i)
        for i in range(len(self.services)):
            visit(i)
        return out

    # ------------------------------------------------------------------ core
    def terms(self, X: np.ndarray, partial: bool = False, E: np.ndarray | None = None,
              links: tuple[np.ndarray, np.ndarray] | None = None) -> dict[str, np.ndarray]:
        """All the model's terms for a batch X (B, S, N), computed by the compiled kernel
        (sim.latency_kernel). Every service needs ≥ 1 replica, unless ``partial``: then a service
        without replicas counts as absent (no execution time, no call delay, no gateway delay; the
        services it calls still count), the cost of a placement being built pod by pod. ``E``: time
        per (service, node) other than the profile's execution time (S, N) or (B, S, N) — the
        queueing model's sojourn times (sim.queueing). ``links``: (D (B, N, N), user RTT (B, N)),
        each placement's own RTTs instead of the topology's (a request's draw: sim.variability)."""
        X = np.ascontiguousarray(X, dtype=np.float64)
        if X.ndim == 2:
            X = X[None]
        B = X.shape[0]
        E = self.E if E is None else np.asarray(E, dtype=np.float64)
        E = np.ascontiguousarray(E[None] if E.ndim == 2 else E)
        T_E, T_S, D_S = np.empty((B, self.S)), np.empty((B, self.S)), np.empty((B, len(self.edges)))
        D_gw, D_msa = np.empty(B), np.empty(B)
        if links is None:
            batch_terms(X, E, *self.rtt, self.user_rtt, *self.graph, partial, T_E, T_S, D_S, D_gw, D_msa)
        else:  # a draw of every link (a measured testbed's jitter): dense, as a testbed is small
            D, user = (np.ascontiguousarray(a, dtype=np.float64) for a in links)
            batch_terms_links(X, E, D, user, *self.graph, partial, T_E, T_S, D_S, D_gw, D_msa)
        D_S = {e: D_S[:, k] for k, e in enumerate(self.edges)}
        return {"T_E": T_E, "T_S": T_S, "D_S": D_S, "D_gateway": D_gw, "D_msa": D_msa}

    def request_ms(self, X: np.ndarray, t: dict[str, np.ndarray], entry: int | None = None,
                   user_rtt: np.ndarray | None = None) -> np.ndarray:
        """(B,) a request's latency for the batch ``X`` (B, S, N) whose terms are ``t`` (``terms``):
        D_msa (any entry, with equal chance), or of a request entering at service ``entry`` (an
        index of ``services``; apps deployed together each have their own): eq. 8 over that
        service's replicas (as the kernel's gateway term) plus its T_S. ``user_rtt``: the user's
        RTTs the terms were computed with ((B, N): a request's draw), else the model's."""
        if entry is None:
            return t["D_msa"]
        X = np.asarray(X, float)
        at = (X[None] if X.ndim == 2 else X)[:, entry, :]  # (B, N)
        user = self.user_rtt[None] if user_rtt is None else np.asarray(user_rtt, float)
        n = at.sum(axis=1)
        gateway = np.divide((at * user).sum(axis=1), n, out=np.zeros(len(n)), where=n > 0)  # partial: none
        return gateway + t["T_S"][:, entry]

    def partial_latency(self, X: np.ndarray) -> np.ndarray:
        """D_msa of each (partial) placement of the batch, services without replicas left out:
        0 for an empty placement, D_msa for a complete one (the rollout's stage costs add up to it)."""
        return self.terms(X, partial=True)["D_msa"]

    def latency(self, X: np.ndarray) -> np.ndarray:
        """D_msa in ms for each placement of the batch."""
        return self.terms(X)["D_msa"]

    def upper_bound_ms(self) -> float:
        """No placement's D_msa exceeds this: the slowest node for every service, the slowest link
        for every call, and every group's calls added up instead of the slowest group taken."""
        d_max = self.topo.max_rtt()
        ub = np.zeros(self.S)
        for i in self.order:  # callees first
            ub[i] = self.E[i].max() + sum(float(w @ (d_max + ub[cs])) for cs, w in self.groups[i])
        return float(self.topo.user_rtt.max() + max(ub[g] for g in self.entries))

    # ------------------------------------------------------------------ placements
    def counts(self, placement: dict[str, list[str]]) -> np.ndarray:
        col = {n: k for k, n in enumerate(self.topo.nodes)}
        X = np.zeros((self.S, len(self.topo.nodes)))
        for s, nodes in placement.items():
            for n in nodes:
                X[self.index[s], col[n]] += 1
        return X

    def predict(self, placement: dict[str, list[str]]) -> dict:
        """The prediction and its breakdown, in plain Python types (what `harness predict` prints)."""
        return self.predict_counts(self.counts(placement))

    def predict_counts(self, X: np.ndarray) -> dict:
        """``predict`` of a replica-count matrix (S, N)."""
        t = self.terms(X)
        return {
            "latency_ms": float(t["D_msa"][0]),
            "gateway_ms": float(t["D_gateway"][0]),
            "services": {s: {"T_E_ms": float(t["T_E"][0, i]), "T_S_ms": float(t["T_S"][0, i])}
                         for i, s in enumerate(self.services)},
            "edges": [{"caller": self.services[i], "callee": self.services[j], "D_S_ms": float(v[0])}
                      for (i, j), v in t["D_S"].items()],
        }
