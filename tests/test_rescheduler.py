"""The one move loop in simulation (the live rescheduler runs the same ``run_round``)."""

from __future__ import annotations

from harness.policies.contract import Ability, Move, NoArgs, Policy
from harness.rescheduler.evaluate import run_policy
from harness.sim.ceenv import Dynamics, EnvConfig, default_model


class Planner(Policy):
    Args, abilities = NoArgs, frozenset({Ability.PLAN})

    def __init__(self):
        super().__init__(NoArgs())
        self.calls = 0


class Toggle(Planner):
    """Moves the first pod back and forth between two nodes, never idles."""

    name = "toggle"

    def plan(self, view):
        pod = view.pods[0]
        return [Move(pod.name, next(n.name for n in view.nodes[:2] if n.name != pod.node))]


class TwoSteps(Planner):
    """Two different moves, then idle: the guard must let honest progress through."""

    name = "two"

    def plan(self, view):
        self.calls += 1
        if self.calls > 2:
            return []
        pod = view.pods[0]
        i = (view.index(pod.node) + 1) % len(view.nodes)
        return [Move(pod.name, view.nodes[i].name)]


class WholePlan(Planner):
    """Three moves in one plan, the first of them impossible until the others are made."""

    name = "whole"

    def plan(self, view):
        self.calls += 1
        if self.calls > 1:
            return []
        a, b = view.pods[0], view.pods[1]
        targets = [n.name for n in view.nodes if n.name not in (a.node, b.node)]
        return [Move("no-such-pod", targets[0]), Move(a.name, targets[0]), Move(b.name, targets[1])]


def dyn():
    return Dynamics(default_model(None, None), EnvConfig())


def test_a_policy_going_back_and_forth_is_stopped_after_one_move():
    r = run_policy(dyn(), Toggle(), "toggle", 4, [0], max_moves=30)
    assert r.moves <= 2  # at most to the other node and (if it started elsewhere) one more, never 30


def test_distinct_moves_are_not_stopped():
    assert run_policy(dyn(), TwoSteps(), "two", 4, [0], max_moves=30).moves == 2


def test_a_plan_is_followed_move_by_move_skipping_what_is_not_valid():
    p = WholePlan()
    r = run_policy(dyn(), p, "whole", 8, [0], max_moves=30)
    # the invalid move stays in the plan; the two valid ones are made, then the round ends on it
    assert r.moves == 2 and p.calls == 1
