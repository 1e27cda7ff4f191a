"""Worlds besides the one ground's cluster: a family with a problem of its own registers it here
(SIL-GPO's service-graph deployment: ``harness.families.silgpo.commands``), and a scenario file's
or a leaderboard track's ``world`` names it. A world is an object (a module will do) with:

- for its scenario files (``harness run``; ``harness.scenarios.world_run``): ``scenario_model()``
  (the pydantic model of its files: ``world``, ``name``, ``description``, ``duration_s``,
  ``warmup_s``, ``threshold_ms`` and its own fields) and ``plays(scenario, names, model_dir,
  cluster)`` (each policy's decision, a ``world_run.Play``; a name that does not fit is one
  UserError line);
- for a leaderboard track: ``policy_names()``, ``missing(policy, app, setting, model_dir)``,
  ``LEARNERS``, ``model_file(...)``, ``train_argv(...)``, ``play(cell, out, model_dir)``,
  ``play_live(cell, out, model_dir, cluster)`` and ``INVENTORY`` (its live testbed).
"""

from __future__ import annotations

from typing import Any

WORLDS: dict[str, Any] = {}


def register(name: str, world: Any) -> None:
    WORLDS[name] = world


def get(name: str) -> Any:
    """The world ``name`` (the families loaded first: they register theirs); KeyError if none."""
    from harness.policies import load_all

    load_all()
    return WORLDS[name]


def names() -> list[str]:
    from harness.policies import load_all

    load_all()
    return sorted(WORLDS)
