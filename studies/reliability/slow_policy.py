"""A policy that thinks too long (issue 43's probe): places as cloud-first, and spends
``$HARNESS_SLOW_PLAN_S`` seconds (default 30) on every plan before proposing nothing. Named as
``studies.reliability.slow_policy:SlowPlanner`` from the repository root."""

from __future__ import annotations

import os
import time

from harness.policies.contract import Ability
from harness.policies.heuristics import CloudFirst


class SlowPlanner(CloudFirst):
    name = "slow-planner"
    description = "cloud-first placement; every plan takes $HARNESS_SLOW_PLAN_S seconds and proposes nothing"
    abilities = frozenset({Ability.PLACE, Ability.PLAN})

    def plan(self, view):
        time.sleep(float(os.environ.get("HARNESS_SLOW_PLAN_S", "30")))
        return []

