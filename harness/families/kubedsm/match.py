"""KubeDSM's *match* (paper 004, eqs. 14-16; the authors' FitInEdge): pods onto edge nodes so
that the nodes end up least fragmented, as an exact dynamic programme.

A node's "defragmentation" is the code's: the product over resources of used / capacity after
placing (so a node filled in every resource scores near 1), 0.1 for an empty node; the match
maximises its sum over the edge nodes. The paper's formula (its eq. 13) is blank in every copy.

Pods of one service are identical, so the programme runs over **count vectors** (how many pods of
each service) instead of the paper's subsets of pods: f[i][c] is the best sum over the first i
nodes holding the pods c; node i takes any d ≤ c that fits its free room. Exact, and it answers
for every sub-vector of the batch at once which ones fit at all: makeDecision reads both from one
run. Cost: nodes × Π_s (n_s + 1)(n_s + 2) / 2 — about 2·10⁵ steps for 20 pods over 4 services.
"""

from __future__ import annotations

import numba
import numpy as np

EMPTY_NODE = 0.1  # the code's value for a node with nothing on it
EPS = 1e-9


@numba.njit(cache=True)
def node_value(used: np.ndarray, cap: np.ndarray) -> float:
    empty = True
    v = 1.0
    for r in range(used.shape[0]):
        if abs(used[r]) > 1e-10:
            empty = False
        v *= used[r] / cap[r]
    return EMPTY_NODE if empty else v


@numba.njit(cache=True)
def _match(counts: np.ndarray, req: np.ndarray, used: np.ndarray, cap: np.ndarray, limit: np.ndarray):
    S = counts.shape[0]
    E = used.shape[0]
    R = req.shape[1]
    stride = np.ones(S, np.int64)
    for s in range(1, S):
        stride[s] = stride[s - 1] * (counts[s - 1] + 1)
    T = stride[S - 1] * (counts[S - 1] + 1) if S else 1
    digits = np.zeros((T, S), np.int64)
    for c in range(T):
        rest = c
        for s in range(S - 1, -1, -1):
            digits[c, s] = rest // stride[s]
            rest -= digits[c, s] * stride[s]
    f = np.full((E + 1, T), -np.inf)
    par = np.zeros((E + 1, T), np.int64)
    f[0, 0] = 0.0
    load = np.zeros(R)
    d = np.zeros(S, np.int64)
    for i in range(E):
        for c in range(T):
            best, arg = -np.inf, -1
            for s in range(S):
                d[s] = 0
            while True:  # every d <= digits[c], as an odometer
                dc = 0
                for r in range(R):
                    load[r] = used[i, r]
                for s in range(S):
                    dc += d[s] * stride[s]
                    for r in range(R):
                        load[r] += d[s] * req[s, r]
                fits = True
                for r in range(R):
                    if load[r] > cap[i, r] + EPS:
                        fits = False
                if fits and f[i, c - dc] > -np.inf:
                    v = f[i, c - dc] + node_value(load, cap[i])
                    if v > best:
                        best, arg = v, dc
                s = 0
                while s < S and (d[s] == digits[c, s] or d[s] == limit[i, s]):
                    d[s] = 0
                    s += 1
                if s == S:
                    break
                d[s] += 1
            f[i + 1, c] = best
            par[i + 1, c] = arg
    return f[E], par, digits


class Match:
    """One run of the programme for a batch ``counts`` (per service) on the edge nodes' ``used``
    and ``cap`` (E × R); ``limit`` (E × S, optional) caps how many of a service's pods a node may
    take (its placement constraints: 0 outside its node_affinity, 1 with pod_antiaffinity).
    ``value[c]`` is the best sum of node values holding the sub-vector c (index of ``vectors``),
    -inf where it does not fit; ``nodes(c)`` says which node takes how many."""

    def __init__(self, counts, req, used, cap, limit=None):
        self.counts = np.asarray(counts, np.int64)
        used = np.asarray(used, float)
        limit = np.full((len(used), len(self.counts)), 1 << 30, np.int64) if limit is None else np.asarray(limit, np.int64)
        self.value, self._par, self.vectors = _match(self.counts, np.asarray(req, float), used,
                                                     np.asarray(cap, float), limit)
        self.E = len(used)

    def fits(self) -> np.ndarray:
        return self.value > -np.inf

    def nodes(self, c: int) -> np.ndarray:
        """(E, S): how many pods of each service node i takes in the best arrangement of c."""
        out = np.zeros((self.E, len(self.counts)), np.int64)
        for i in range(self.E, 0, -1):
            dc = int(self._par[i, c])
            out[i - 1] = self.vectors[dc]
            c -= dc
        return out
