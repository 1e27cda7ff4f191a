"""Every policy harness knows, whatever it does and in whichever world it acts, each under one
name: the one ground's policies (this package's ``REGISTRY``: placers and planners of pods on a
cluster's nodes, in ``harness evaluate``, ``run`` and the leaderboard), the learners of a
family's own world (``world_learners``), and what a family registers here for its world (SIL-GPO's
deployers, HephaestusForge's admission baselines).

A name is unique: where two worlds use the same word, the entry outside the one ground is
qualified with its world (``rollout@servicegraph``, ``cpu-greedy@multicluster``); a command
accepts the bare word where its world makes it plain, and ``name@world`` anywhere. ``harness
policies`` lists them all."""

from __future__ import annotations

import dataclasses
import inspect
import sys
from dataclasses import dataclass
from pathlib import Path

CLUSTER = "cluster"
WORLDS = {  # what each world is, and where its policies run
    CLUSTER: ("the one ground: pods on a cluster's nodes", "harness evaluate, run, leaderboard"),
    "multicluster": ("HephaestusForge's world: deployment requests admitted onto clusters",
                     "harness train; python -m studies.hephaestus.baselines"),
    "servicegraph": ("SIL-GPO's world: service instances deployed on edge servers",
                     "harness train; harness run with a world: servicegraph scenario (silgpo-edge); a leaderboard "
                     "track with world: servicegraph; python -m studies.silgpo.baselines"),
}
# what a policy of each world does, beside training
WORLD_ABILITY = {"multicluster": "admit", "servicegraph": "deploy"}


@dataclass(frozen=True)
class Entry:
    word: str  # the policy's own word; its name is qualified where another world uses it too
    world: str
    abilities: tuple[str, ...]
    family: str  # reach, hephaestus, silgpo, rollout, kubedsm; harness (its own); plug-in
    summary: str
    name: str = ""  # unique: set by ``entries``
    models: tuple[str, ...] = ()  # committed models at hand, as paths

    def as_json(self) -> dict:
        return {"name": self.name, "world": self.world, "abilities": list(self.abilities), "family": self.family,
                "summary": self.summary, "models": list(self.models)}


_OWN: list[Entry] = []  # entries families register for their own worlds


def register(word: str, world: str, summary: str, family: str, train: bool = False) -> None:
    """A family's policy of its own world (``world`` one of ``WORLDS``)."""
    if world not in WORLDS or world == CLUSTER:
        raise ValueError(f"a family registers here for its own world, one of {sorted(set(WORLDS) - {CLUSTER})}")
    abilities = (WORLD_ABILITY[world],) + (("train",) if train else ())
    _OWN.append(Entry(word, world, abilities, family, summary))


def family_of(module: str) -> str:
    parts = module.split(".")
    if parts[:2] == ["harness", "families"] and len(parts) > 2:
        return parts[2]
    return "harness" if parts[0] == "harness" else "plug-in"


def _summary(obj) -> str:
    text = getattr(obj, "description", None) or inspect.getdoc(obj) or ""
    return " ".join(text.strip().split("\n\n")[0].split())


def _models(word: str) -> tuple[str, ...]:
    from harness import shipped

    folder = shipped.find("models")
    if not Path(folder).is_dir():
        return ()
    return tuple(sorted(str(Path("models") / p.name) for p in Path(folder).glob(f"{word}-*.pt")))


def entries() -> list[Entry]:
    """Every policy once, with its unique name (the one ground's bare, another world's qualified
    where the word is taken)."""
    from harness.policies import REGISTRY, load_all
    from harness.policies import world_learners

    load_all()
    out: list[Entry] = []
    for word, cls in sorted(REGISTRY.items()):
        out.append(Entry(word, CLUSTER, tuple(a.value for a in cls.abilities), family_of(cls.__module__),
                         _summary(cls), models=_models(word) if "train" in {a.value for a in cls.abilities} else ()))
    learners = world_learners._learners()
    seen = {(e.word, e.world) for e in out}
    for learner in learners.values():
        module = sys.modules[learner.Args.__module__]  # the learner's module says what it is
        out.append(Entry(learner.name, learner.world, (WORLD_ABILITY[learner.world], "train"),
                         family_of(learner.train.__module__), _summary(module),
                         models=_models(learner.name)))
        seen.add((learner.name, learner.world))
    out += [e for e in _OWN if (e.word, e.world) not in seen]
    cluster_words = {e.word for e in out if e.world == CLUSTER}
    return [dataclasses.replace(e, name=e.word if e.world == CLUSTER or e.word not in cluster_words
                                else f"{e.word}@{e.world}") for e in out]


def split(name: str) -> tuple[str, str | None]:
    """``'rollout@servicegraph'`` -> ``('rollout', 'servicegraph')``; a bare word -> (word, None)."""
    word, at, world = name.partition("@")
    return word, (world if at else None)


def elsewhere(name: str, world: str = CLUSTER) -> str | None:
    """Why ``name`` does not act in ``world`` when it is a policy of another world: one line
    naming its world and where it runs; None when it is no policy harness knows."""
    word, asked = split(name)
    found = [e for e in entries() if e.word == word and e.world != world and (asked is None or e.world == asked)]
    if not found:
        return None
    e = found[0]
    return (f"{e.name} is a policy of {WORLDS[e.world][0]} ({e.world}), not of {WORLDS[world][0]} ({world}); "
            f"it runs in: {WORLDS[e.world][1]}")


