"""A training's whole state on disk, so a training of hours spans sessions: written atomically
(a stop while writing leaves the previous state), and read back only for the same settings."""

from __future__ import annotations

from pathlib import Path

import torch

from harness.errors import UserError

EVERY = 50  # episodes between two saved states of a training that saves them (SIL-GPO, RSDQL's deployment DQN)


def random_state(rng) -> dict:
    """Both random streams a training draws from: its numpy Generator's and torch's."""
    return {"np_rng": rng.bit_generator.state, "torch_rng": torch.get_rng_state()}


def restore_random(rng, state: dict) -> None:
    rng.bit_generator.state = state["np_rng"]
    torch.set_rng_state(state["torch_rng"])


def save(path: Path, settings: dict, state: dict) -> None:
    """``state`` (nets, optimisers, random streams, buffers: anything torch.save pickles) with the
    ``settings`` it belongs to."""
    tmp = path.with_suffix(path.suffix + ".part")
    torch.save({"settings": settings, "state": state}, tmp)
    tmp.replace(path)


def load(path: Path, settings: dict, field: str) -> dict:
    """The state saved at ``path``; one UserError line when there is none or it was saved for
    other settings (naming the first that differs)."""
    if not path.exists():
        raise UserError("no training state to go on from; drop the flag to start a training", source=str(path),
                        field=field)
    saved = torch.load(path, weights_only=False)
    if saved["settings"] != settings:
        raise UserError(f"the saved training has other settings ({first_difference(saved['settings'], settings)}); "
                        "give the same flags, or start over with --force", source=str(path), field=field)
    return saved["state"]


def first_difference(saved: dict, now: dict) -> str:
    """The first setting that differs, as "name: saved, now"; a nested dict is looked into."""
    for key in sorted(set(saved) | set(now)):
        a, b = saved.get(key), now.get(key)
        if isinstance(a, dict) and isinstance(b, dict) and a != b:
            return first_difference(a, b)
        if a != b:
            return f"{key}: {a!r} saved, {b!r} now"
    return "none"
