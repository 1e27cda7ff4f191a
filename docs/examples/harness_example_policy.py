"""A policy of your own, outside harness: edge first when placing, and a greedy rescheduler."""
from dataclasses import dataclass

from harness.policies.contract import Ability, ClusterView, Move, PendingPod, Policy


@dataclass
class GreedyArgs:
    min_gain_ms: float = 1.0  # a move must save at least this much predicted latency


class GreedyMover(Policy):
    name = "greedy-mover"
    description = "edge nodes first when placing; then the move that saves the most predicted latency"
    Args = GreedyArgs
    abilities = frozenset({Ability.PLACE, Ability.PLAN})

    def place(self, view: ClusterView, pods: list[PendingPod]) -> list[str | None]:
        out = []
        for pod in pods:  # one after another, each seeing the pods placed before it
            fits = [n for n, ok in zip(view.nodes, view.feasible(pod)) if ok]  # up, room, constraints
            best = max(fits, key=lambda n: (n.role == "edge", n.free_cpu), default=None)
            if best is not None:
                view = view.with_pod(pod, best.name)
            out.append(None if best is None else best.name)  # None: the pod stays pending
        return out

    def plan(self, view: ClusterView) -> list[Move]:
        moves = [Move(p.name, n.name) for p in view.pods for n in view.nodes]
        scored = [(view.after(m).latency_ms(), m) for m in moves if view.valid(m)]
        best = min(scored, key=lambda s: s[0], default=None)
        if best is None or view.latency_ms() - best[0] < self.args.min_gain_ms:
            return []  # idle
        return [best[1]]
