"""Placement heuristics (REACH §VI-D baselines): they place pods, they never move them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.policies import register
from harness.policies.contract import ClusterView, NoArgs, OneAtATime, PendingPod
from harness.sim import kube_scheduler


@dataclass
class DefaultArgs:
    spread_weight: float = 1.0  # weight of spreading a service's replicas against the resource scores


@register
class KubeDefault(OneAtATime):
    """kube-scheduler's semantics (``harness.sim.kube_scheduler``): filter nodes with room, score
    LeastAllocated + BalancedAllocation + spreading a service's replicas, best score wins."""

    name = "default"
    description = "Kubernetes' default scheduler: least allocated, balanced, replicas spread"
    Args = DefaultArgs

    def choose(self, view: ClusterView, pod: PendingPod) -> str | None:
        return self._choose_among(view, pod, None)

    def _choose_among(self, view: ClusterView, pod: PendingPod, among: np.ndarray | None) -> str | None:
        """The best-scoring node, only among the nodes ``among`` marks (None: all)."""
        peers = np.zeros(len(view.nodes))
        for p in view.pods:
            if p.service == pod.service:
                peers[view.index(p.node)] += 1
        allowed = view.allowed(pod.service) if among is None else view.allowed(pod.service) & among
        i = kube_scheduler.default_choice(view.up, view.cap_cpu, view.cap_memory_mib, view.used_cpu,
                                          view.used_memory_mib, pod.cpu, pod.memory_mib, peers, self.args.spread_weight,
                                          allowed)
        return None if i is None else view.nodes[i].name


def _least_allocated(view: ClusterView, among: np.ndarray) -> str:
    free = np.where(among, (view.cap_cpu - view.used_cpu) / view.cap_cpu, -np.inf)
    return view.nodes[int(np.argmax(free))].name


@register
class CloudFirst(OneAtATime):
    """Cloud nodes first (least allocated among them), the others only when the cloud is full."""

    name = "cloud-first"
    description = "cloud nodes first, least allocated; edge only when the cloud is full"
    Args = NoArgs

    def choose(self, view: ClusterView, pod: PendingPod) -> str | None:
        ok = view.feasible(pod)
        cloud = np.array([n.role == "cloud" for n in view.nodes])
        for group in (ok & cloud, ok & ~cloud):
            if group.any():
                return _least_allocated(view, group)
        return None


@register
class LatencyGreedy(OneAtATime):
    """The node closest to the user, least allocated among equals (computation near users)."""

    name = "latency-greedy"
    description = "the node nearest the user, least allocated among equally near ones"
    Args = NoArgs

    def choose(self, view: ClusterView, pod: PendingPod) -> str | None:
        ok = view.feasible(pod)
        if not ok.any():
            return None
        return view.nodes[nearest_least_allocated(view.user_rtt, view.cap_cpu, view.used_cpu, ok)].name


def nearest_least_allocated(user_rtt: np.ndarray, cap_cpu: np.ndarray, used_cpu: np.ndarray, ok: np.ndarray) -> int:
    """latency-greedy's rule on arrays: among the nodes ``ok`` marks (at least one), those nearest
    the user (within 1 ms counts as equally near), the one with the largest free CPU share."""
    d = np.where(ok, user_rtt, np.inf)
    near = ok & (d <= d.min() + 1.0)
    return int(np.argmax(np.where(near, (cap_cpu - used_cpu) / cap_cpu, -np.inf)))
