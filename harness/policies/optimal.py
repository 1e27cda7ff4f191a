"""Exact search for small instances: every placement (replicas of a service as a multiset of
nodes), feasibility checked against capacity, latency by the model in vectorised chunks. It
gives the optimum that other policies' gaps are measured against."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from harness.policies import register
from harness.policies.ceenv_state import to_ceenv
from harness.policies.contract import Ability, CannotPlan, ClusterView, Move, Policy
from harness.sim.ceenv import Batch, Dynamics


@dataclass
class OptimalArgs:
    max_placements: int = 20_000_000  # beyond this the instance is "too large" (None returned)
    chunk: int = 50_000

    def validate(self):
        if self.max_placements < 1 or self.chunk < 1:
            raise ValueError("max_placements and chunk must be ≥ 1")


@register
class Optimal(Policy):
    """Searches once from the placement it is given and plans the moves to the optimum (a pod
    already on an optimal node stays); the loop follows the plan. Asked again at the placement
    its plan leads to, it is idle without searching again."""

    name = "optimal"
    description = "exhaustive search over REACH's latency model (small instances), then the moves there"
    Args = OptimalArgs
    abilities = frozenset({Ability.PLAN})

    def __init__(self, args: OptimalArgs):
        super().__init__(args)
        self._reached: bytes | None = None  # the placement the last plan leads to

    def solve(self, dyn: Dynamics, st: Batch, b: int) -> tuple[np.ndarray, float] | None:
        """The best slot -> node assignment for the pods of environment b, or None if too large."""
        slots_of = [np.flatnonzero((dyn.slot_service == s) & (st.node[b] >= 0)) for s in range(dyn.S)]
        options = []  # per service: (K_s, N) replica counts
        for s, slots in enumerate(slots_of):
            first = s * dyn.cfg.max_replicas  # the service's constraints: affinity, and anti-affinity
            nodes = np.flatnonzero(st.up[b] & dyn.affinity[first])
            pick = itertools.combinations if dyn.spread[first] else itertools.combinations_with_replacement
            combos = list(pick(nodes, len(slots)))
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

    def plan(self, view: ClusterView) -> list[Move]:
        if view.key() == self._reached:
            return []
        per_service = max([len(view.pods_of(s)) for s in view.model.services] + [1])
        dyn, st, names = to_ceenv(view, per_service)
        sol = self.solve(dyn, st, 0)
        if sol is None:
            raise CannotPlan(f"more than {self.args.max_placements:,} placements to search")
        target: dict[str, list[str]] = {}
        for slot, pod in names.items():
            target.setdefault(view.pod(pod).service, []).append(view.nodes[int(sol[0][slot])].name)
        moves = view.moves_to(target)
        self._reached = view.after_all(moves).key()
        return moves

