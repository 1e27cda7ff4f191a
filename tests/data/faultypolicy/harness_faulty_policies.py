"""User policies that fail, for tests of how a run contains them (``module:Class`` references)."""

from __future__ import annotations

import time

from harness.policies.contract import Ability, NoArgs, Policy
from harness.policies.heuristics import CloudFirst


class RaisesInPlace(Policy):
    name = "raises-in-place"
    Args, abilities = NoArgs, frozenset({Ability.PLACE})

    def place(self, view, pods):
        raise ValueError("no idea where to put anything")


class RaisesInPlan(CloudFirst):
    """Places as cloud-first; every plan raises."""

    name = "raises-in-plan"
    abilities = frozenset({Ability.PLACE, Ability.PLAN})

    def plan(self, view):
        raise ZeroDivisionError("a bug in the policy")


class PlacesOnceOnly(CloudFirst):
    """Places the app at deployment, then raises on every later placement (self-healing, scale-ups)."""

    name = "places-once-only"

    def __init__(self, args):
        super().__init__(args)
        self.calls = 0

    def place(self, view, pods):
        self.calls += 1
        if self.calls > 1:
            raise RuntimeError("out of ideas")
        return super().place(view, pods)


class SlowPlanner(CloudFirst):
    """Thinks ``SLOW_S`` seconds about every plan, then stays put."""

    name = "slow-planner"
    abilities = frozenset({Ability.PLACE, Ability.PLAN})
    SLOW_S = 3.0

    def plan(self, view):
        time.sleep(self.SLOW_S)
        return []


class DiesOnce(CloudFirst):
    """Kills the process it runs in the first time it places anything (a worker that dies: a
    segfault, the OOM killer); places as cloud-first after. The marker file says it died already."""

    name = "dies-once"
    MARKER_ENV = "HARNESS_DIES_ONCE_MARKER"

    def place(self, view, pods):
        import os
        from pathlib import Path

        marker = Path(os.environ[self.MARKER_ENV])
        if not marker.exists():
            marker.write_text("died")
            os._exit(9)
        return super().place(view, pods)


class WrongPlan(CloudFirst):
    """Places as cloud-first; every plan returns what no Move is."""

    name = "wrong-plan"
    abilities = frozenset({Ability.PLACE, Ability.PLAN})

    def plan(self, view):
        return [("a", "b"), 7, "x"]


class PlacesNaN(Policy):
    name = "places-nan"
    Args, abilities = NoArgs, frozenset({Ability.PLACE})

    def place(self, view, pods):
        return [float("nan")] * len(pods)


class PlacesNowhere(Policy):
    name = "places-nowhere"
    Args, abilities = NoArgs, frozenset({Ability.PLACE})

    def place(self, view, pods):
        return ["no-such-node"] * len(pods)


class HangsInPlan(CloudFirst):
    """Places as cloud-first; every plan sleeps an hour (a policy that hangs)."""

    name = "hangs-in-plan"
    abilities = frozenset({Ability.PLACE, Ability.PLAN})

    def plan(self, view):
        time.sleep(3600)
        return []


class HangsAfterDeploy(CloudFirst):
    """Places the app at deployment, then sleeps an hour in every later placement (self-healing)."""

    name = "hangs-after-deploy"

    def __init__(self, args):
        super().__init__(args)
        self.calls = 0

    def place(self, view, pods):
        self.calls += 1
        if self.calls > 1:
            time.sleep(3600)
        return super().place(view, pods)


class HangsInPlace(Policy):
    """Sleeps an hour in every placement, deployment's too."""

    name = "hangs-in-place"
    Args, abilities = NoArgs, frozenset({Ability.PLACE})

    def place(self, view, pods):
        time.sleep(3600)
        return [None] * len(pods)
