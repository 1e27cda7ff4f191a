"""REACH's eqs. 2-9 compiled: the one implementation behind ``LatencyModel.terms``.

The model's call graph is flattened into arrays (``Graph``) so one numba function evaluates a
placement without Python per call edge; CEEnv's compiled transition (``ceenv_kernels``) calls
the per-placement function directly. A caller's row of X @ D is computed once and shared by
all its calls (the einsum per edge it replaces cost O(edges · N²) per placement).

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


@numba.njit(cache=True, error_model="numpy")
def placement_terms(X, E, D, user_rtt, g_order, g_grp, g_call, g_callee, g_weight, g_edge, g_ecaller, g_ecallee,
                    g_entries, partial, T_E, T_S, D_S):
    """One placement X (S, N): fills T_E (S,), T_S (S,), D_S (Ed,); returns (D_gateway, D_msa)."""
    S, N = X.shape
    count = np.zeros(S)
    for s in range(S):
        tot, c = 0.0, 0.0
        for n in range(N):
            if X[s, n] > 0:
                tot += X[s, n] * E[s, n]
                c += X[s, n]
        count[s] = c
        T_E[s] = _per(tot, c, partial)
    # X[i] @ D once per caller, then every call edge is one dot product
    XD = np.zeros((S, N))
    done = np.zeros(S, dtype=np.bool_)
    for e in range(len(g_ecaller)):
        i, j = g_ecaller[e], g_ecallee[e]
        if not done[i]:
            done[i] = True
            for n in range(N):
                x = X[i, n]
                if x != 0:
                    for m in range(N):
                        XD[i, m] += x * D[n, m]
        tot = 0.0
        for m in range(N):
            tot += XD[i, m] * X[j, m]
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
        for n in range(N):
            tot += X[s, n] * user_rtt[n]
        gw += _per(tot, count[s], partial)
        ts += T_S[s]
    gw /= len(g_entries)
    return gw, gw + ts / len(g_entries)


@numba.njit(cache=True, error_model="numpy")
def batch_terms(X, E, D, user_rtt, g_order, g_grp, g_call, g_callee, g_weight, g_edge, g_ecaller, g_ecallee,
                g_entries, partial, T_E, T_S, D_S, D_gw, D_msa):
    """Every placement of X (B, S, N); E is (1, S, N) for all or (B, S, N) per placement."""
    for b in range(X.shape[0]):
        eb = b if E.shape[0] > 1 else 0
        D_gw[b], D_msa[b] = placement_terms(X[b], E[eb], D, user_rtt, g_order, g_grp, g_call, g_callee, g_weight,
                                            g_edge, g_ecaller, g_ecallee, g_entries, partial, T_E[b], T_S[b], D_S[b])
