"""KubeDSM's baselines (paper 004, §6): schedulers of a cloud-assisted edge cluster that keep pods
on the edge while it has room, each one pod at a time. They place; they never move pods.

- ``k8s-edge``: the default scheduler steered to the edge (taints and node affinity in the paper):
  kube-scheduler's scoring among the edge nodes, the cloud only when no edge node fits.
- ``bef`` / ``sef``: first fit over the edge nodes, biggest / smallest first; the cloud when none
  fits. "Size" is the node's capacity, cores then memory (the paper does not say capacity or free
  room; the baselines' code, Sencillo, is not public: our choice, documented here and in the note).
- ``cf``: cloud first: first fit over the cloud nodes, the edge only when the cloud is full.
- ``random``: a node drawn uniformly among those that fit (seeded).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.policies import register
from harness.policies.contract import ClusterView, NoArgs, OneAtATime, PendingPod
from harness.policies.heuristics import DefaultArgs, KubeDefault
from harness.spec.args import arg


def first_fit(view: ClusterView, pod: PendingPod, order: list[int]) -> str | None:
    ok = view.feasible(pod)
    return next((view.nodes[i].name for i in order if ok[i]), None)


def by_size(view: ClusterView, role: str, biggest: bool) -> list[int]:
    """Indices of the nodes of ``role`` by capacity (cores, then memory), then by name."""
    idx = [i for i, n in enumerate(view.nodes) if n.role == role]
    sign = -1 if biggest else 1
    return sorted(idx, key=lambda i: (sign * view.nodes[i].cpus, sign * view.nodes[i].memory_mib, view.nodes[i].name))


@register
class K8sEdge(KubeDefault):
    """kube-scheduler's choice among the edge nodes that fit; among the others only when none does."""

    name = "k8s-edge"
    description = "KubeDSM's K8S baseline: the default scheduler steered to edge nodes, cloud when no edge fits"
    Args = DefaultArgs

    def choose(self, view: ClusterView, pod: PendingPod) -> str | None:
        edge = np.array([n.role == "edge" for n in view.nodes])
        for group in (edge, ~edge):
            node = self._choose_among(view, pod, group)
            if node is not None:
                return node
        return None


@register
class BiggestEdgeFirst(OneAtATime):
    name = "bef"
    description = "KubeDSM's BEF: first fit over edge nodes, biggest first; cloud when none fits"
    Args = NoArgs

    def choose(self, view: ClusterView, pod: PendingPod) -> str | None:
        return first_fit(view, pod, by_size(view, "edge", True) + by_size(view, "cloud", True))


@register
class SmallestEdgeFirst(OneAtATime):
    name = "sef"
    description = "KubeDSM's SEF: first fit over edge nodes, smallest first; cloud when none fits"
    Args = NoArgs

    def choose(self, view: ClusterView, pod: PendingPod) -> str | None:
        return first_fit(view, pod, by_size(view, "edge", False) + by_size(view, "cloud", True))


@register
class CloudFirstFit(OneAtATime):
    name = "cf"
    description = "KubeDSM's CF: first fit over cloud nodes (biggest first); edge only when the cloud is full"
    Args = NoArgs

    def choose(self, view: ClusterView, pod: PendingPod) -> str | None:
        return first_fit(view, pod, by_size(view, "cloud", True) + by_size(view, "edge", True))


@dataclass
class RandomArgs:
    seed: int = arg(0, "seed of the draws")


@register
class RandomFit(OneAtATime):
    name = "random"
    description = "a node drawn uniformly among those that fit (KubeDSM's Random baseline)"
    Args = RandomArgs

    def __init__(self, args: RandomArgs):
        super().__init__(args)
        self.rng = np.random.default_rng(args.seed)

    def choose(self, view: ClusterView, pod: PendingPod) -> str | None:
        ok = np.flatnonzero(view.feasible(pod))
        return view.nodes[int(self.rng.choice(ok))].name if len(ok) else None
