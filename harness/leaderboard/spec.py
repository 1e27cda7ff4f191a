"""A leaderboard file (``leaderboards/seeds.yaml``): versioned, a list of tracks. A track is a
problem class: an inventory, the apps, the scenarios played on each, the metric it ranks by and
the policies (default: every registered one whose abilities fit). A track of ``world:
servicegraph`` is SIL-GPO's deployment problem instead (``harness.families.silgpo.commands``): its
apps are instances of that world (``authors``: the authors' default one; ``seed-N``: generated),
its scenarios the settings (``default``, or one of Figs 8-10's: ``arrival=LOW,HIGH``,
``chain=LOW,HIGH``, ``requests=N``), its policies the deployment baselines and learners."""

from __future__ import annotations

import shlex

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from harness.spec.loader import load_model

# what a track may rank by: a summary field or one of its placement metrics, and which way is better
METRICS = {"mean_ms": "lower", "p95_ms": "lower", "errors": "lower", "edge_ratio": "higher", "cost": "lower",
           "rejection_rate": "lower", "request_rejection_rate": "lower", "replica_cost": "lower", "gini_sites": "lower",
           "recovery_s": "lower", "moves": "lower",
           "cost_delay_objective": "lower", "cost_delay_gap": "lower",
           "total_delay": "lower", "total_delay_s": "lower", "unstable_queues": "lower"}  # SIL-GPO's world
SCENARIO_APPS = "scenario"  # a track's app that means: the apps each scenario names, as it names them


class Track(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    description: str = ""
    world: Literal["cluster", "servicegraph"] = Field("cluster", description="cluster: apps on a testbed's nodes "
                                                       "(harness run's world); servicegraph: SIL-GPO's deployment problem")
    inventory: str | None = Field(None, description="the testbed (default: REACH's; a servicegraph track's live "
                                  "testbed: inventories/silgpo-local.yaml)")
    apps: list[str] = Field(default_factory=lambda: [SCENARIO_APPS], min_length=1,
                            description=f"shipped app names or app files; '{SCENARIO_APPS}' (the default): the apps "
                            "each scenario names (several apps deployed together)")
    profile: str | None = Field(None, description="one profile file for every app of the track (default: "
                                "profiles/<app>.<testbed>.json); a composed app's profile names <app>-<service>")
    scenarios: list[str] = Field(min_length=1, description="built-in scenario names or scenario files")
    primary: Literal[tuple(METRICS)] = "mean_ms"  # type: ignore[valid-type]
    policies: list[str] | None = Field(None, description="default: every registered policy")
    reference: str = Field("default", description="the policy every other one's ratio is to (paired run by run); "
                           "a world without a 'default' names its own baseline")
    terminating_s: float = Field(0.0, ge=0, description="simulation: how long a stopped pod holds its room")
    gap_time_limit_s: float = Field(0.0, ge=0, description="paper 003's problem: HiGHS's budget for each cell's "
                                    "optimality gap (cost_delay_gap); 0: none")

    @property
    def better(self) -> str:
        return METRICS[self.primary]

    @model_validator(mode="after")
    def _reference_plays(self):
        if self.policies is not None and self.reference not in self.policies:
            raise ValueError(f"reference: {self.reference!r} is not among the track's policies {self.policies}")
        return self

    @model_validator(mode="after")
    def _servicegraph(self):
        if self.world != "servicegraph":
            return self
        bad = [a for a in self.apps if a != "authors" and not (a.startswith("seed-") and a[5:].isdigit())]
        if bad:
            raise ValueError(f"apps: a servicegraph track's apps are 'authors' or 'seed-N', got {bad}")
        if "authors" in self.apps and any(s != "default" for s in self.scenarios):
            raise ValueError("scenarios: the authors' instance is the default setting; a setting of Figs 8-10 needs "
                             "generated instances (seed-N)")
        if self.profile or self.terminating_s or self.gap_time_limit_s:
            raise ValueError("profile, terminating_s and gap_time_limit_s are for cluster tracks")
        return self


class Leaderboard(BaseModel):
    model_config = ConfigDict(extra="forbid")
    version: int = Field(ge=1, description="bumped whenever a track changes: results of two versions do not compare")
    name: str
    tracks: list[Track] = Field(min_length=1)
    train: dict[str, str] = Field(default_factory=dict, description="harness train's flags per learned policy for the "
                                  "models `harness leaderboard --train` makes where one is missing (e.g. reach: "
                                  "'--recipe fast'); a policy not named trains with its defaults")

    @model_validator(mode="after")
    def _unique(self):
        names = [t.name for t in self.tracks]
        if len(set(names)) != len(names):
            raise ValueError(f"tracks: names must be unique, got {names}")
        for policy, flags in self.train.items():
            if {"--out", "--name"} & set(shlex.split(flags)):
                raise ValueError(f"train.{policy}: --out and --name are the leaderboard's (--model-dir, the model's "
                                 "name), not the file's")
        return self


def load_leaderboard(path: Path) -> Leaderboard:
    return load_model(Leaderboard, path)
