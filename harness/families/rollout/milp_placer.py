"""Paper 003's MILP as a placer on the one ground: the apps' microservices where eq. 1 is lowest
(HiGHS), or at the best placement found within the time limit. It places paper 003's problem only
(an app with ``sources``: ``harness.families.rollout.cost_delay``) and refuses any other cluster up front."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from harness.errors import UserError
from harness.families.rollout import cost_delay
from harness.policies import register
from harness.policies.contract import Ability, ClusterView, PendingPod, Policy
from harness.families.rollout.world import Instance
from harness.spec.app import App


@dataclass
class MilpArgs:
    time_limit_s: float = 30.0  # HiGHS's budget per placement; past it the best incumbent is placed
    start: str = "rollout"  # the feasible placement HiGHS begins from: rollout | greedy-bestfit | none

    def validate(self):
        if self.time_limit_s <= 0:
            raise ValueError("time_limit_s must be > 0")
        if self.start not in ("rollout", "greedy-bestfit", "none"):
            raise ValueError("start is rollout, greedy-bestfit or none")


@register
class CostDelayMilp(Policy):
    name = "cost-delay-milp"
    description = "paper 003's MILP (HiGHS): each app's microservices at the optimum of cost and delay (eq. 1)"
    Args = MilpArgs
    abilities = frozenset({Ability.PLACE})

    @classmethod
    def unfit(cls, app: App) -> str | None:
        return None if app.sources else "places paper 003's problem only (an app with sources)"

    def check(self, view: ClusterView) -> None:
        if cost_delay.apps_of(view.app) is None:
            raise UserError("cost-delay-milp places paper 003's problem only: an app with 'sources' (each entry's "
                            "data node), one replica per service", field="--policy")

    def assign(self, inst: Instance) -> list[np.ndarray]:
        from harness.policies import build
        from harness.families.rollout import milp as multiapp_milp

        start = None if self.args.start == "none" else build(self.args.start).assign(inst)
        return multiapp_milp.solve(inst, self.args.time_limit_s, start=start).assign

    def place(self, view: ClusterView, pods: Sequence[PendingPod]) -> list[str | None]:
        placed = cost_delay.place(view, pods, self.assign)
        return [None] * len(pods) if placed is None else placed
