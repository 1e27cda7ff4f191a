"""Exact search for small instances: every placement (replicas of a service as a multiset of
nodes), feasibility checked against capacity, latency by the model in vectorised chunks. It
gives the optimum that other policies' gaps are measured against."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from harness.policies import register
from harness.sim.ceenv import Batch, Dynamics


@dataclass
class OptimalArgs:
    max_placements: int = 20_000_000  # beyond this the instance is "too large" (None returned)
    chunk: int = 50_000

    def validate(self):
        if self.max_placements < 1 or self.chunk < 1:
            raise ValueError("max_placements and chunk must be ≥ 1")


class Optimal:
    name = "optimal"
    moves = True

    def __init__(self, args: OptimalArgs):
        self.args = args
        self._plan: list[tuple[int, int]] = []  # moves still to make toward the last optimum
        self._expect: bytes | None = None  # the placement the plan expects to see next

    def solve(self, dyn: Dynamics, st: Batch, b: int) -> tuple[np.ndarray, float] | None:
        """The best slot -> node assignment for the pods of environment b, or None if too large."""
        nodes = np.flatnonzero(st.up[b])
        slots_of = [np.flatnonzero((dyn.slot_service == s) & (st.node[b] >= 0)) for s in range(dyn.S)]
        options = []  # per service: (K_s, N) replica counts
        for s, slots in enumerate(slots_of):
            combos = list(itertools.combinations_with_replacement(nodes, len(slots)))
            m = np.zeros((len(combos), dyn.N))
            for k, c in enumerate(combos):
                np.add.at(m[k], list(c), 1)
            options.append(m)
        total = int(np.prod([len(o) for o in options], dtype=float))
        if total > self.args.max_placements:
            return None
        r_cpu = np.array([dyn.r_cpu[sl[0]] if len(sl) else 0 for sl in slots_of])
        r_mem = np.array([dyn.r_mem[sl[0]] if len(sl) else 0 for sl in slots_of])
        room_cpu = dyn.C_cpu - st.bg_cpu[b] + 1e-9
        room_mem = dyn.C_mem - st.bg_mem[b] + 1e-9
        best, best_lat = None, np.inf
        sizes = [len(o) for o in options]
        for start in range(0, total, self.args.chunk):
            idx = np.unravel_index(np.arange(start, min(total, start + self.args.chunk)), sizes)
            X = np.stack([options[s][idx[s]] for s in range(dyn.S)], axis=1)  # (C, S, N)
            ok = ((X * r_cpu[None, :, None]).sum(1) <= room_cpu).all(1) & ((X * r_mem[None, :, None]).sum(1) <= room_mem).all(1)
            if not ok.any():
                continue
            lat = dyn.model.latency(X[ok])
            k = int(np.argmin(lat))
            if lat[k] < best_lat:
                best_lat, best = float(lat[k]), X[ok][k]
        if best is None:
            return None
        assign = st.node[b].copy()
        for s, slots in enumerate(slots_of):
            assign[slots] = np.repeat(np.arange(dyn.N), best[s].astype(int))
        return assign, best_lat

    def prepare(self, dyn, st, b) -> bool:
        """Search once from this placement and plan the moves to the optimum; False when the
        instance is too large (then there is no plan)."""
        sol = self.solve(dyn, st, b)
        if sol is None:
            self._plan, self._expect = [], None
            return False
        target = _match(dyn, st.node[b], sol[0])
        self._plan = [(int(s), int(target[s])) for s in np.flatnonzero(target != st.node[b])]
        self._expect = st.node[b].tobytes()
        return True

    def next_move(self, dyn, st, b):
        """Move pods toward the optimum one at a time (a pod already on an optimal node stays).
        The search runs once; its plan is followed while the placement is the one it expects."""
        if self._expect != st.node[b].tobytes() and not self.prepare(dyn, st, b):
            return None
        for k, (slot, node) in enumerate(self._plan):
            if dyn.masks(st)[b, slot * dyn.N + node]:
                del self._plan[k]
                after = st.node[b].copy()
                after[slot] = node
                self._expect = after.tobytes()
                return slot, node
        self._expect = None
        return None


def _match(dyn: Dynamics, current: np.ndarray, goal: np.ndarray) -> np.ndarray:
    """Assign the goal's nodes to slots so that as many pods as possible stay where they are."""
    out = current.copy()
    for s in range(dyn.S):
        slots = np.flatnonzero((dyn.slot_service == s) & (current >= 0))
        want = list(goal[slots])
        stay = []
        for sl in slots:
            if current[sl] in want:
                want.remove(current[sl])
                stay.append(sl)
        for sl in slots:
            if sl not in stay:
                out[sl] = want.pop()
    return out


@register("optimal", OptimalArgs)
def _optimal(args):
    return Optimal(args)
