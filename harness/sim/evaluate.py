"""Compare policies in simulation (REACH Fig. 8 and §VII-F, on the model): for each pod count,
the same scenarios (random background utilisation, seeded) are given to every policy.
Placement heuristics place all pods; reschedulers start from the default scheduler's placement
and move pods until they choose idle or hit the step cap; ``optimal`` searches exhaustively."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.sim.ceenv import Batch, Dynamics


@dataclass
class Result:
    policy: str
    pods: int
    latency_ms: float  # mean over scenarios
    moves: float  # mean moves per scenario
    moved_share: float  # mean share of pods moved at least once
    scenarios: int


def scenario(dyn: Dynamics, pods: int, seed: int) -> Batch:
    """Background load only; no pods placed yet."""
    if pods % dyn.S:
        raise ValueError(f"{pods} pods do not split evenly over {dyn.S} services")
    st = dyn.new_batch(1)
    rng = np.random.default_rng(seed)
    lo, hi = dyn.cfg.utilisation
    st.bg_cpu[0] = rng.uniform(lo, hi, dyn.N) * dyn.C_cpu
    st.bg_mem[0] = rng.uniform(lo, hi, dyn.N) * dyn.C_mem
    return st


def slots_for(dyn: Dynamics, pods: int) -> np.ndarray:
    r = pods // dyn.S
    return np.concatenate([s * dyn.cfg.max_replicas + np.arange(r) for s in range(dyn.S)])


def run_policy(dyn: Dynamics, policy, name: str, pods: int, seeds: list[int], max_moves: int | None = None) -> Result | None:
    from harness.policies.heuristics import KubeDefault, DefaultArgs
    from harness.rescheduler import CycleGuard

    max_moves = max_moves or dyn.cfg.max_steps
    lat, moves, shares = [], [], []
    for seed in seeds:
        st = scenario(dyn, pods, seed)
        slots = slots_for(dyn, pods)
        if getattr(policy, "moves", False):
            KubeDefault(DefaultArgs()).place_all(dyn, st, 0, slots)
            # the observation carries the current latency: keep it true, as CEEnv and the live loop do
            st.latency = dyn.latency(st)
            start = st.node[0].copy()
            n = 0
            if hasattr(policy, "prepare") and not policy.prepare(dyn, st, 0):
                return None  # a search-based policy that cannot handle this size
            guard = CycleGuard(dyn)
            guard.start(st)
            for _ in range(max_moves):
                move = policy.next_move(dyn, st, 0)
                if move is None:
                    break
                slot, node = move
                previous = st.node[0, slot]
                st.node[0, slot] = node
                if not guard.allows(st):  # back to a placement already held: the live loop stops here too
                    st.node[0, slot] = previous
                    break
                guard.moved(st)
                st.latency = dyn.latency(st)
                n += 1
            moves.append(n)
            shares.append(float((st.node[0][slots] != start[slots]).mean()))
        else:
            policy.place_all(dyn, st, 0, slots)
            st.latency = dyn.latency(st)
            moves.append(0)
            shares.append(0.0)
        lat.append(float(st.latency[0]))  # kept current after every move above
    return Result(name, pods, float(np.mean(lat)), float(np.mean(moves)), float(np.mean(shares)), len(seeds))


def write_results(rows: list[dict], out: Path) -> None:
    """``out`` as CSV and the same rows as JSON beside it."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    out.with_suffix(".json").write_text(json.dumps(rows, indent=1))
