"""Placement heuristics (REACH §VI-D baselines): they place pods, they never move them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.policies import register
from harness.sim.ceenv import Batch, Dynamics


class Placer:
    """Places pods one at a time with ``choose``; ``place_all`` fills empty slots in order."""

    moves = False

    def choose(self, dyn: Dynamics, st: Batch, b: int, slot: int) -> int | None:
        raise NotImplementedError

    def place(self, dyn: Dynamics, st: Batch, b: int, slot: int) -> int | None:
        node = self.choose(dyn, st, b, slot)
        if node is not None:
            st.node[b, slot] = node
        return node

    def place_all(self, dyn: Dynamics, st: Batch, b: int, slots) -> None:
        for slot in slots:
            if self.place(dyn, st, b, slot) is None:
                raise RuntimeError(f"no node has room for pod slot {slot}")

    def next_move(self, dyn, st, b):
        return None


@dataclass
class DefaultArgs:
    spread_weight: float = 1.0


class KubeDefault(Placer):
    """kube-scheduler's semantics: filter nodes with room (NodeResourcesFit), score
    LeastAllocated + BalancedAllocation + spreading a service's replicas, best score wins."""

    name = "default"

    def __init__(self, args: DefaultArgs):
        self.args = args

    def choose(self, dyn, st, b, slot):
        ok, cpu, mem = dyn.room(st, b, slot)
        if not ok.any():
            return None
        cpu_f = (cpu + dyn.r_cpu[slot]) / dyn.C_cpu
        mem_f = (mem + dyn.r_mem[slot]) / dyn.C_mem
        least = 100 * ((1 - cpu_f) + (1 - mem_f)) / 2
        balanced = 100 * (1 - np.abs(cpu_f - mem_f))
        same = dyn.slot_service == dyn.slot_service[slot]
        peers = np.bincount(st.node[b][same & (st.node[b] >= 0)], minlength=dyn.N)
        spread = 100 * (1 - peers / max(1, peers.max())) if peers.max() else np.full(dyn.N, 100.0)
        score = np.where(ok, least + balanced + self.args.spread_weight * spread, -np.inf)
        return int(np.argmax(score))


@register("default", DefaultArgs)
def _default(args: DefaultArgs):
    return KubeDefault(args)


@dataclass
class NoArgs:
    pass


class CloudFirst(Placer):
    """Cloud nodes first (least allocated among them), edge only when the cloud is full."""

    name = "cloud-first"

    def choose(self, dyn, st, b, slot):
        ok, cpu, _ = dyn.room(st, b, slot)
        cloud = np.array([t == "cloud" for t in dyn.model.topo.tiers])
        for group in (ok & cloud, ok & ~cloud):
            if group.any():
                free = np.where(group, (dyn.C_cpu - cpu) / dyn.C_cpu, -np.inf)
                return int(np.argmax(free))
        return None


class LatencyGreedy(Placer):
    """The node closest to the user, least allocated among equals (computation near users)."""

    name = "latency-greedy"

    def choose(self, dyn, st, b, slot):
        ok, cpu, _ = dyn.room(st, b, slot)
        if not ok.any():
            return None
        d = np.where(ok, dyn.model.topo.user_rtt, np.inf)
        near = ok & (d <= d.min() + 1.0)  # within 1 ms counts as equally near
        free = np.where(near, (dyn.C_cpu - cpu) / dyn.C_cpu, -np.inf)
        return int(np.argmax(free))


@register("cloud-first", NoArgs)
def _cloud_first(args):
    return CloudFirst()


@register("latency-greedy", NoArgs)
def _latency_greedy(args):
    return LatencyGreedy()
