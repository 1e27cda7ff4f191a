"""KubeDSM's *match* (paper 004, eqs. 14-16; the authors' FitInEdge): pods onto edge nodes so
that the nodes end up least fragmented, as an exact dynamic programme.

A node's "defragmentation" is the code's: the product over resources of used / capacity after
placing (so a node filled in every resource scores near 1), 0.1 for an empty node; the match
maximises its sum over the edge nodes. The paper's formula (its eq. 13) is blank in every copy.

Pods of one service are identical, so the programme runs over **count vectors** (how many pods of
each service) instead of the paper's subsets of pods: f[i][c] is the best sum over the first i
nodes holding the pods c; node i takes any d ≤ c that fits its free room. Exact, and it answers
for every sub-vector of the batch at once which ones fit at all: makeDecision reads both from one
run. Cost: nodes × Π_s (n_s + 1)(n_s + 2) / 2 — about 2·10⁵ steps for 20 pods over 4 services;
the nodes being the few of each class of nodes alike that a batch can use (``Match``).
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
    -inf where it does not fit; ``nodes(c)`` says which node takes how many.

    Nodes alike (the same capacity, use and limits) are interchangeable, and a batch of P pods
    lands on P nodes at most: the programme runs over the first P nodes of each such class only,
    and not over a node that no pod of the batch fits (a full one); the others add their value
    as they are (so ``value`` is the sum over every node still). On a thousand edge nodes that
    KubeDSM packs (many full, a few being filled, the rest empty and alike) that is tens of nodes."""

    def __init__(self, counts, req, used, cap, limit=None):
        self.counts = np.asarray(counts, np.int64)
        used, cap = np.asarray(used, float), np.asarray(cap, float)
        limit = np.full((len(used), len(self.counts)), 1 << 30, np.int64) if limit is None else np.asarray(limit, np.int64)
        self.E = len(used)
        some = np.flatnonzero(self.counts)
        room = (used[:, None, :] + np.asarray(req, float)[None, some, :] <= cap[:, None, :] + EPS).all(axis=2)
        takes = (room & (limit[:, some] > 0)).any(axis=1)  # a node no pod of the batch fits keeps its value
        self.kept = np.intersect1d(_first_of_each_class(used, cap, limit, int(self.counts.sum())), np.flatnonzero(takes))
        rest = np.setdiff1d(np.arange(self.E), self.kept)
        # a service the batch has none of adds nothing: left out, the vectors in the same order
        self.value, self._par, vectors = _match(self.counts[some], np.asarray(req, float)[some], used[self.kept],
                                                cap[self.kept], limit[np.ix_(self.kept, some)])
        self.vectors = np.zeros((len(vectors), len(self.counts)), np.int64)
        self.vectors[:, some] = vectors
        if len(rest):
            self.value = self.value + sum(node_values(used[rest], cap[rest]).tolist())

    def fits(self) -> np.ndarray:
        return self.value > -np.inf

    def nodes(self, c: int) -> np.ndarray:
        """(E, S): how many pods of each service node i takes in the best arrangement of c."""
        out = np.zeros((self.E, len(self.counts)), np.int64)
        for i in range(len(self.kept), 0, -1):
            dc = int(self._par[i, c])
            out[self.kept[i - 1]] = self.vectors[dc]
            c -= dc
        return out


def node_values(used: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """``node_value`` of each row at once (the same products, in the same order)."""
    v = np.ones(len(used))
    for r in range(used.shape[1]):
        v = v * (used[:, r] / cap[:, r])
    return np.where(np.all(np.abs(used) <= 1e-10, axis=1), EMPTY_NODE, v)


def _first_of_each_class(used: np.ndarray, cap: np.ndarray, limit: np.ndarray, pods: int) -> np.ndarray:
    """The indices (in order) of the first ``pods`` nodes of each class of nodes alike."""
    if not len(used):
        return np.zeros(0, np.int64)
    _, cls = np.unique(np.concatenate([used, cap, limit.astype(float)], axis=1), axis=0, return_inverse=True)
    cls = cls.ravel()
    order = np.argsort(cls, kind="stable")
    first = np.r_[True, cls[order][1:] != cls[order][:-1]]
    start = np.maximum.accumulate(np.where(first, np.arange(len(cls)), 0))
    rank = np.empty(len(cls), np.int64)
    rank[order] = np.arange(len(cls)) - start
    return np.flatnonzero(rank < max(pods, 1)).astype(np.int64)
