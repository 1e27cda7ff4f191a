"""Leaderboard worlds besides the one ground's cluster: a family with a problem of its own
registers it here (SIL-GPO's service-graph deployment: ``harness.families.silgpo.leaderboard``),
and a track's ``world`` names it. A world is an object (a module will do) with:
``policy_names()``, ``missing(policy, app, setting, model_dir)``, ``LEARNERS``,
``model_file(...)``, ``train_argv(...)``, ``play(cell, out, model_dir)``,
``play_live(cell, out, model_dir, cluster)`` and ``INVENTORY`` (its live testbed)."""

from __future__ import annotations

from typing import Any

WORLDS: dict[str, Any] = {}


def register(name: str, world: Any) -> None:
    WORLDS[name] = world


def get(name: str) -> Any:
    """The world ``name`` (the families loaded first: they register theirs)."""
    from harness.policies import load_all

    load_all()
    return WORLDS[name]
