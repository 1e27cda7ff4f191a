"""Learners whose world is not the one ground's cluster view, registered by their families
(HephaestusForge's DS-PPO and DS-DQN in the multi-cluster admission world, paper 001; SIL-GPO
and its DQN baseline in the service-graph deployment world, paper 002). ``harness train --policy NAME`` trains one in the
world it declares: every field of its Args and of its world's settings is a flag, and the model
is saved as every harness model is (``<out>/<name>.pt`` with its metadata in ``.json`` and its
learning curve in ``.curve.csv`` and ``.curve.png``). A learner that can stop and go on
(``resumable``: SIL-GPO and RSDQL's deployment DQN, whose models take hours here) also keeps its training state in
``<name>.ckpt``; ``resume`` goes on from it.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from harness.errors import UserError


@dataclass(frozen=True)
class WorldLearner:
    name: str
    world: str
    Args: type
    World: type
    train: Callable[..., tuple[Any, dict, list[tuple], tuple[str, ...], tuple[str, str]]]
    resumable: bool = False  # train(..., checkpoint=, start=) saves and resumes its whole state


REGISTRY: dict[str, WorldLearner] = {}


def register(learner: WorldLearner) -> WorldLearner:
    """A family adds a learner of its world (``harness train --policy NAME``)."""
    REGISTRY[learner.name] = learner
    return learner


def _learners() -> dict[str, WorldLearner]:
    """Every world learner, the families loaded first (they register theirs)."""
    from harness.policies import load_all

    load_all()
    return REGISTRY


def names() -> tuple[str, ...]:
    return tuple(_learners())


# flags that say how long or how fast a training runs, not which training it is: a resume may change them
HOW_NOT_WHAT = ("episodes", "compile")


def groups(learner: WorldLearner) -> dict[str, type]:
    return {f"{learner.name} (its Args)": learner.Args, f"world ({learner.world})": learner.World}


def parse(name: str, argv: list[str]) -> tuple[Any, Any, Any]:
    """(Args, world settings, the world they build) from ``harness train``'s flags; a bad flag or
    setting is one UserError line."""
    from harness.spec.args import parse_flags

    learner = _learners()[name]
    parsed = parse_flags(list(argv), groups(learner))
    world = parsed[f"world ({learner.world})"]
    return parsed[f"{name} (its Args)"], world, world.build() if hasattr(world, "build") else world


def trained(name: str, argv: list[str], path: Path, progress: Callable[[int, int, float], None] = lambda *a: None) -> Path:
    """The model at ``path`` of learner ``name`` with ``harness train``'s flags ``argv``: kept if
    it has the episodes asked, else resumed from its ``.ckpt`` where there is one, else trained;
    so a study's models of hours span sessions."""
    args, world, built = parse(name, argv)
    if has_episodes(path, args.episodes):
        return path
    train_and_save(name, args, world, built, path.parent, path.stem, True, progress,
                   resume=path.with_suffix(".ckpt").exists())
    return path


def has_episodes(path: Path, episodes: int) -> bool:
    """Whether the model at ``path`` was saved with at least ``episodes`` episodes trained, by its
    ``.json`` (written with the model when a training ends): a study that publishes only a
    model's curve keeps the ``.json`` and ``.curve.csv`` without the weights."""
    import json

    meta = path.with_suffix(".json")
    return meta.exists() and json.loads(meta.read_text())["args"].get("episodes", 0) >= episodes


def not_resumable(name: str) -> None:
    raise UserError(f"{name} does not keep a training state to go on from; resumable: "
                    + ", ".join(n for n, w in _learners().items() if w.resumable), field="--resume")


def train_and_save(name: str, args, world, built, out_dir: Path, model: str | None, force: bool,
                   progress: Callable[[int, int, float], None], resume: bool = False) -> tuple[Path, dict]:
    """Train the world learner ``name`` in ``built`` (from ``parse``); (model path, metadata).
    ``resume``: go on with the training state of ``<model>.ckpt`` (the same settings; more
    episodes allowed)."""
    from harness.rl import checkpoint as ckpt
    from harness.rl.acting import save_model
    from harness.rl.curves import write_curve

    learner = _learners()[name]
    started = time.time()
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(started))
    path = out_dir / f"{model or f'{name}-{learner.world}-seed{args.seed}-{stamp}'}.pt"
    state = path.with_suffix(".ckpt")
    settings = {"policy": name, "world_config": dataclasses.asdict(world),
                "args": {k: v for k, v in dataclasses.asdict(args).items() if k not in HOW_NOT_WHAT}}
    start = None
    if resume:
        if not learner.resumable:
            not_resumable(name)
        start = ckpt.load(state, settings, "--resume")
        force = True  # the model of a shorter run of the same training is replaced
    elif learner.resumable and state.exists():
        if not force:
            raise UserError("a training of that name left its state here; --resume to go on with it (or past its "
                            "--episodes), or --force to start over", source=str(state))
        state.unlink()  # starting over: a stop before the first save must not resume the old training
    if path.exists() and not force:
        raise UserError("a model of that name exists; choose another --name, or --force to replace it",
                        source=str(path))
    out_dir.mkdir(parents=True, exist_ok=True)  # the first training state is saved before the model
    resumable = {"checkpoint": lambda st: ckpt.save(state, settings, st), "start": start} if learner.resumable else {}
    net, extra, rows, columns, labels = learner.train(built, args, progress, **resumable)
    from harness import __version__, shipped

    meta = {"policy": name, "world": learner.world, "world_config": dataclasses.asdict(world),
            "args": dataclasses.asdict(args), "name": path.stem,
            "trained_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
            "provenance": {"world": learner.world, "world_config": dataclasses.asdict(world),
                           "seed": getattr(args, "seed", None), "harness_version": __version__,
                           "harness_commit": shipped.commit()}, **extra}
    if start is not None:
        meta["resumed_from_episode"] = start["episode"]
    save_model(net, meta, path)
    write_curve(rows, path.with_suffix(".curve.csv"), path.with_suffix(".curve.png"), f"{name} in {learner.world}",
                columns, labels)
    return path, meta
