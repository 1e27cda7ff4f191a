"""A placement given in advance: each pod goes where a placement file says.

What calibration and the fidelity benchmark deploy (chosen placements, measured one after the
other). Not registered: it needs its placement as an argument, which only the library gives. A pod of a service goes to
the first node the file lists for it that has fewer of the service's pods than the file asks;
a pod beyond the file's count (a scale-up, or a node the file names that is down) is placed by
the Kubernetes default scheduler.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from harness.errors import UserError
from harness.policies.contract import ClusterView, OneAtATime, PendingPod
from harness.policies.heuristics import KubeDefault


@dataclass
class PinnedArgs:
    placement: dict[str, list[str]] | None = None  # service -> [node, ...], one entry per replica

    def validate(self) -> None:
        if self.placement is None:
            raise ValueError("pinned needs a placement: service -> [node, ...]")


class Pinned(OneAtATime):
    name = "pinned"
    description = "the placement a file gives, pod by pod; the default scheduler for pods beyond it"
    Args = PinnedArgs

    def __init__(self, args: PinnedArgs):
        super().__init__(args)
        self.want = {s: list(nodes) for s, nodes in (args.placement or {}).items()}
        self.fallback = KubeDefault(KubeDefault.Args())

    def check(self, view: ClusterView) -> None:
        names = {n.name for n in view.nodes}
        for s, nodes in self.want.items():
            if s not in view.app.services:
                raise UserError(f"the placement names service {s!r}, which the app does not have", field="placement")
            for n in nodes:
                if n not in names:
                    raise UserError(f"the placement puts {s!r} on {n!r}, which is no node pods may run on",
                                    field=f"placement.{s}")

    def choose(self, view: ClusterView, pod: PendingPod) -> str | None:
        have = Counter(p.node for p in view.pods if p.service == pod.service)
        ok = view.feasible(pod)
        for node, wanted in Counter(self.want.get(pod.service, [])).items():
            if have[node] < wanted and ok[view.index(node)]:
                return node
        return self.fallback.choose(view, pod)
