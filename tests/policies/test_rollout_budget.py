"""The rollout's time budget (anytime): past it the pods left are placed by the base policy, so
with no time at all the rollout is its base policy, and without a budget it is unchanged."""

from __future__ import annotations

import numpy as np

from harness.families.rollout.rollout import RolloutArgs, _Board, _pods, rollout_on_model
from harness.policies import build
from tests.generators.world import generated_view


def world():
    return generated_view(30, 8, 20, seed=1)


def base_alone(view, pods, base: str) -> list[int | None]:
    board = _Board(view, view.counts(), view.used_cpu, view.used_memory_mib)
    out = []
    for s, cpu, mem in _pods(view, pods):
        n = board.base_choice(base, s, cpu, mem)
        if n is not None:
            board.put(s, n, cpu, mem)
        out.append(n)
    return out


def test_no_time_left_is_the_base_policy_and_no_budget_the_rollout():
    view, pods = world()
    board = lambda: _Board(view, view.counts(), view.used_cpu, view.used_memory_mib)  # noqa: E731
    spent = rollout_on_model(board(), _pods(view, pods), RolloutArgs(budget_s=1e-9))
    assert spent == base_alone(view, pods, "latency-greedy")
    unbounded = rollout_on_model(board(), _pods(view, pods), RolloutArgs())
    assert rollout_on_model(board(), _pods(view, pods), RolloutArgs(budget_s=3600.0)) == unbounded
    assert None not in unbounded
    # the look-ahead is what the budget buys: here it finds a faster placement than its base
    X = lambda chosen: np.array([[sum(1 for (s, _, _), n in zip(_pods(view, pods), chosen) if s == k and n == j)  # noqa: E731
                                  for j in range(len(view.nodes))] for k in range(view.model.S)], float)
    assert view.model.latency(X(unbounded))[0] <= view.model.latency(X(spent))[0]


def test_a_budget_is_an_argument_of_the_policy():
    assert build("rollout", budget_s=5.0).args.budget_s == 5.0
