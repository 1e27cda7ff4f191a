"""What a family adds to every run on the one ground without the run knowing the family: a
problem an app may be (paper 003's: ``harness.families.rollout.cost_delay``) whose placers may
leave pods pending, and its objective scored on the placement a run ends with, under its own
key in the run's placement metrics."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from harness.spec.app import App


@dataclass(frozen=True)
class RunExtra:
    key: str  # the placement metrics' key of its score
    applies: Callable[[App], bool]  # the app is this problem: a placer may reject (pods stay pending)
    score: Callable[..., dict | None]  # (ClusterView, gap time limit s) -> its objective, or None


EXTRAS: list[RunExtra] = []


def register(extra: RunExtra) -> None:
    EXTRAS.append(extra)


def extras() -> list[RunExtra]:
    from harness.policies import load_all

    load_all()
    return EXTRAS
