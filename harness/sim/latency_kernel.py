"""REACH's eqs. 2-9 compiled: the one implementation behind ``LatencyModel.terms``.

The model's call graph is flattened into arrays (``Graph``) so one numba function evaluates a
placement without Python per call edge; CEEnv's compiled transition (``ceenv_kernels``) calls
the per-placement function directly. A call edge sums over the nodes its caller and its callee
run on only (the einsum per edge it replaces cost O(edges · N²) per placement, a dense row of
X @ D per caller O(pods · N)), and reads the RTTs per group of nodes (``rtt``), so a
thousand-node topology costs no N × N matrix; an edge between two services of hundreds of pods
each sums per group of nodes (``PAIRS``).

Conventions kept from the numpy version: ``partial`` counts a service without replicas as
absent (0); otherwise its terms are NaN (0/0). Execution time enters only where a pod runs, so
an infinite time (an overloaded node in the queueing model) on an empty node does not count.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np


class Graph(NamedTuple):
    """The call graph as arrays. Service i's groups are grp_ptr[i]..grp_ptr[i+1]; group g's calls
    are call_ptr[g]..call_ptr[g+1], each a callee, its weight and its edge (index into D_S)."""

    order: np.ndarray  # (S,) callees before callers
    grp_ptr: np.ndarray  # (S+1,)
    call_ptr: np.ndarray  # (G+1,)
    callee: np.ndarray  # (C,)
    weight: np.ndarray  # (C,)
    edge: np.ndarray  # (C,)
    edge_caller: np.ndarray  # (Ed,)
    edge_callee: np.ndarray  # (Ed,)
    entries: np.ndarray  # (K,)


def graph(groups, order, edges, entries) -> Graph:
    """``groups[i]``: service i's (callee indices, weights) per group; ``edges``: sorted (i, j)."""
    col = {e: k for k, e in enumerate(edges)}
    grp_ptr, call_ptr, callee, weight, edge = [0], [0], [], [], []
    for i, gs in enumerate(groups):
        for cs, w in gs:
            for j, wj in zip(cs, w):
                callee.append(int(j))
                weight.append(float(wj))
                edge.append(col[(i, int(j))])
            call_ptr.append(len(callee))
        grp_ptr.append(len(call_ptr) - 1)
    ints = lambda v: np.array(v, dtype=np.int64)  # noqa: E731
    return Graph(ints(order), ints(grp_ptr), ints(call_ptr), ints(callee), np.array(weight, dtype=np.float64),
                 ints(edge), ints([i for i, _ in edges]), ints([j for _, j in edges]), ints(entries))


@numba.njit(cache=True, error_model="numpy")
def _per(total, n, partial):
    if partial and n == 0:
        return 0.0
    return total / n


PAIRS = 4096  # a call edge with more (caller pod, callee pod) node pairs sums per group of nodes instead


@numba.njit(cache=True, inline="always")
def rtt(RT, RS, RG, n, m):
    """D[n, m] from the RTTs held per group (``sim.latency.Topology``): RG (N,) each node's group,
    RT (K, K) between two distinct nodes of two groups, RS (K,) a node's to itself."""
    return RS[RG[n]] if n == m else RT[RG[n], RG[m]]


@numba.njit(cache=True, error_model="numpy")
def placement_terms(X, E, RT, RS, RG, user_rtt, g_order, g_grp, g_call, g_callee, g_weight, g_edge, g_ecaller,
                    g_ecallee, g_entries, partial, T_E, T_S, D_S):
    """One placement X (S, N): fills T_E (S,), T_S (S,), D_S (Ed,); returns (D_gateway, D_msa).
    Each call edge sums over the caller's and the callee's nodes only (X's non-zero entries, in
    node order: the same sums, in the same order, as over every node pair); past PAIRS node pairs
    (hundreds of pods on each side) it sums the caller's pods per group of nodes first, the same
    sum in another order (equal to rounding): O(caller's nodes + K² + callee's nodes)."""
    S, N = X.shape
    count = np.zeros(S)
    ptr = np.zeros(S + 1, dtype=np.int64)
    for s in range(S):
        tot, c, k = 0.0, 0.0, 0
        for n in range(N):
            x = X[s, n]
            if x > 0:
                tot += x * E[s, n]
                c += x
            if x != 0:
                k += 1
        count[s] = c
        ptr[s + 1] = ptr[s] + k
        T_E[s] = _per(tot, c, partial)
    where = np.empty(ptr[S], dtype=np.int64)  # each service's nodes, in order
    for s in range(S):
        k = ptr[s]
        for n in range(N):
            if X[s, n] != 0:
                where[k] = n
                k += 1
    K = RT.shape[0]
    row = np.empty(K)  # a caller's X @ D per group of nodes (the grouped sums, below)
    row_of = -1
    for e in range(len(g_ecaller)):
        i, j = g_ecaller[e], g_ecallee[e]
        tot = 0.0
        if (ptr[i + 1] - ptr[i]) * (ptr[j + 1] - ptr[j]) <= PAIRS:
            for b in range(ptr[j], ptr[j + 1]):
                m = where[b]
                xd = 0.0  # (X[i] @ D)[m]
                for a in range(ptr[i], ptr[i + 1]):
                    n = where[a]
                    xd += X[i, n] * rtt(RT, RS, RG, n, m)
                tot += xd * X[j, m]
        else:  # many pods on both sides: (X[i] @ D)[m] from the caller's pods per group, K² once per caller
            if row_of != i:
                per_group = np.zeros(K)
                for a in range(ptr[i], ptr[i + 1]):
                    per_group[RG[where[a]]] += X[i, where[a]]
                for h in range(K):
                    acc = 0.0
                    for g in range(K):
                        if per_group[g] != 0:
                            acc += per_group[g] * RT[g, h]
                    row[h] = acc
                row_of = i
            for b in range(ptr[j], ptr[j + 1]):
                m = where[b]
                h = RG[m]
                tot += (row[h] + X[i, m] * (RS[h] - RT[h, h])) * X[j, m]  # a pod's call to its own node: RS
        D_S[e] = _per(tot, count[i] * count[j], partial)
    for k in range(S):
        i = g_order[k]
        best = 0.0
        for gi in range(g_grp[i], g_grp[i + 1]):
            tg = 0.0
            for c in range(g_call[gi], g_call[gi + 1]):
                tg += g_weight[c] * (D_S[g_edge[c]] + T_S[g_callee[c]])
            if tg > best or tg != tg:  # NaN propagates, as np.maximum does
                best = tg
        T_S[i] = T_E[i] + best
    gw, ts = 0.0, 0.0
    for k in range(len(g_entries)):
        s = g_entries[k]
        tot = 0.0
        for b in range(ptr[s], ptr[s + 1]):
            n = where[b]
            tot += X[s, n] * user_rtt[n]
        gw += _per(tot, count[s], partial)
        ts += T_S[s]
    gw /= len(g_entries)
    return gw, gw + ts / len(g_entries)


@numba.njit(cache=True, error_model="numpy")
def batch_terms(X, E, RT, RS, RG, user_rtt, g_order, g_grp, g_call, g_callee, g_weight, g_edge, g_ecaller, g_ecallee,
                g_entries, partial, T_E, T_S, D_S, D_gw, D_msa):
    """Every placement of X (B, S, N); E is (1, S, N) for all or (B, S, N) per placement."""
    for b in range(X.shape[0]):
        eb = b if E.shape[0] > 1 else 0
        D_gw[b], D_msa[b] = placement_terms(X[b], E[eb], RT, RS, RG, user_rtt, g_order, g_grp, g_call, g_callee, g_weight,
                                            g_edge, g_ecaller, g_ecallee, g_entries, partial, T_E[b], T_S[b], D_S[b])


@numba.njit(cache=True, error_model="numpy")
def batch_terms_links(X, E, D, user_rtt, g_order, g_grp, g_call, g_callee, g_weight, g_edge, g_ecaller, g_ecallee,
                      g_entries, partial, T_E, T_S, D_S, D_gw, D_msa):
    """``batch_terms`` with each placement's own RTTs: D (B, N, N), user_rtt (B, N) (a request's
    draw of every link's delay: ``sim.variability``)."""
    N = D.shape[1]
    RG = np.arange(N)  # each node its own group: the draw is of every pair
    RS = np.empty(N)
    for b in range(X.shape[0]):
        eb = b if E.shape[0] > 1 else 0
        for n in range(N):
            RS[n] = D[b, n, n]
        D_gw[b], D_msa[b] = placement_terms(X[b], E[eb], D[b], RS, RG, user_rtt[b], g_order, g_grp, g_call, g_callee,
                                            g_weight, g_edge, g_ecaller, g_ecallee, g_entries, partial, T_E[b], T_S[b],
                                            D_S[b])


@numba.njit(cache=True, error_model="numpy")
def node_load(X, E, visits, rate, g_grp, g_call, g_callee, g_weight, out):
    """out (N,): the busy share of each node's CPU under ``rate`` requests/s (in ms·requests/s;
    ``sim.queueing.QueueingModel.node_load`` divides by 1000 and the capacity). Service s's
    arrivals, rate × visits[s], are shared by its replicas equally; callees a caller calls in
    parallel (its groups) that share a node keep it busy for the longest group's work, not the sum."""
    S, N = X.shape
    count = np.zeros(S)
    for s in range(S):
        for n in range(N):
            count[s] += X[s, n]
    out[:] = 0.0
    for s in range(S):
        for n in range(N):
            if X[s, n] > 0:
                out[n] += rate * visits[s] * X[s, n] / count[s] * E[s, n]
    for i in range(S):
        if g_grp[i + 1] - g_grp[i] < 2:
            continue
        for n in range(N):
            total, longest = 0.0, 0.0
            for gi in range(g_grp[i], g_grp[i + 1]):
                work = 0.0
                for c in range(g_call[gi], g_call[gi + 1]):
                    j = g_callee[c]
                    if X[j, n] > 0:
                        work += rate * visits[i] * g_weight[c] * X[j, n] / count[j] * E[j, n]
                total += work
                longest = max(longest, work)
            out[n] -= total - longest


@numba.njit(cache=True)
def ps_stretch(rho, knee):
    """How much longer a job takes on a processor-sharing node busy ρ of the time: 1 / (1 − ρ).
    With ``knee`` < 1, above it the tangent line at the knee instead (finite and still growing, so
    a training reward can rank overloaded placements); with ``knee`` ≥ 1, inf at saturation."""
    if rho < min(knee, 1.0):
        return 1.0 / (1.0 - rho)
    if knee >= 1.0:
        return np.inf
    f = 1.0 / (1.0 - knee)
    return f + f * f * (rho - knee)


@numba.njit(cache=True, error_model="numpy")
def mva_stretch(demand, think, users, out):
    """out (N,): how much longer a request's work on each node takes with ``users`` closed-loop
    users than alone — exact mean value analysis of a closed network of processor-sharing nodes
    (demand (N,): ms of work per request on each node) and a delay of ``think`` ms (the request's
    time off the CPUs: its network round trips): R_n(k) = D_n (1 + Q_n(k − 1)), X(k) = k / (think
    + Σ R_n(k)), Q_n(k) = X(k) R_n(k); the stretch is R_n(users) / D_n = 1 + Q_n(users − 1)."""
    N = len(demand)
    Q = np.zeros(N)
    for k in range(1, users):
        total = think
        for n in range(N):
            total += demand[n] * (1.0 + Q[n])
        x = k / total
        for n in range(N):
            Q[n] = x * demand[n] * (1.0 + Q[n])
    for n in range(N):
        out[n] = 1.0 + Q[n]


@numba.njit(cache=True, error_model="numpy")
def loaded_times(X, E, RT, RS, RG, user_rtt, g_order, g_grp, g_call, g_callee, g_weight, g_edge, g_ecaller, g_ecallee,
                 g_entries, visits, load, closed, knee, capacity, out):
    """out (S, N): every (service, node)'s execution time under load — ``load`` requests/s of
    open-loop arrivals (each node processor sharing: E / (1 − ρ), see ``ps_stretch`` for ``knee``),
    or with ``closed`` that many closed-loop users (``mva_stretch``, the time off the CPUs being the
    load-free latency less the work); ``capacity``: the share of a node's CPU requests get (see
    sim.queueing). The one rule behind sim.queueing's node-ps and CEEnv's load."""
    S, N = X.shape
    busy, stretch = np.empty(N), np.empty(N)
    if closed:
        node_load(X, E, visits, 1.0, g_grp, g_call, g_callee, g_weight, busy)  # ms of work per request
        T_E, T_S, D_S = np.empty(S), np.empty(S), np.empty(len(g_ecaller))
        free = placement_terms(X, E, RT, RS, RG, user_rtt, g_order, g_grp, g_call, g_callee, g_weight, g_edge, g_ecaller,
                               g_ecallee, g_entries, False, T_E, T_S, D_S)[1]
        for n in range(N):
            busy[n] /= capacity
        mva_stretch(busy, max(0.0, free - busy.sum()), int(round(load)), stretch)
    else:
        node_load(X, E, visits, load, g_grp, g_call, g_callee, g_weight, busy)
        for n in range(N):
            stretch[n] = ps_stretch(busy[n] / 1000 / capacity, knee)
    for s in range(S):
        for n in range(N):
            out[s, n] = E[s, n] * stretch[n]
