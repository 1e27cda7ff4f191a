"""A training's whole state on disk, so a training of hours spans sessions: written atomically
(a stop while writing leaves the previous state), and read back only for the same settings.

The file holds data only, and is read as data only (``torch.load(weights_only=True)``): a
checkpoint can come from anywhere, and unpickling runs code. Numpy arrays become tensors, and an
object of one of the classes registered with ``@plain`` becomes its fields, rebuilt on load by
that class alone; anything else is refused when saving."""

from __future__ import annotations

import dataclasses
import importlib
from pathlib import Path

import numpy as np
import torch

from harness.errors import UserError

_PLAIN: dict[str, type] = {}


def plain(cls: type) -> type:
    """Class decorator: objects of ``cls`` may be saved in a training state, as their fields."""
    _PLAIN[f"{cls.__module__}:{cls.__qualname__}"] = cls
    return cls


def _encode(x):
    if isinstance(x, np.ndarray):
        return {"__np__": torch.from_numpy(np.ascontiguousarray(x)), "dtype": str(x.dtype)}
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, dict):
        return {k: _encode(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_encode(v) for v in x]
    if isinstance(x, tuple):
        return {"__tuple__": [_encode(v) for v in x]}
    if isinstance(x, (torch.Tensor, str, int, float, bool, type(None))):
        return x
    key = f"{type(x).__module__}:{type(x).__qualname__}"
    if key not in _PLAIN:
        raise TypeError(f"a training state cannot hold a {key} (not registered with checkpoint.plain)")
    fields = dataclasses.asdict(x) if dataclasses.is_dataclass(x) else vars(x)
    return {"__obj__": key, "fields": _encode(dict(fields))}


def _defaults(cls: type) -> dict:
    """A dataclass's fields that have a default, with it (a state saved before a field was added
    comes back with the field at its default)."""
    if not dataclasses.is_dataclass(cls):
        return {}
    out = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            out[f.name] = f.default_factory()
    return out


def _decode(x):
    if isinstance(x, dict):
        if "__np__" in x:
            return x["__np__"].numpy().astype(x["dtype"], copy=False)
        if "__tuple__" in x:
            return tuple(_decode(v) for v in x["__tuple__"])
        if "__obj__" in x:
            cls = _PLAIN.get(x["__obj__"])
            if cls is None:  # its module registers it on import
                importlib.import_module(x["__obj__"].partition(":")[0])
                cls = _PLAIN.get(x["__obj__"])
            if cls is None:
                raise ValueError(f"a {x['__obj__']} is not a class a training state may hold")
            obj = cls.__new__(cls)
            obj.__dict__.update(_defaults(cls))  # a field added since the state was saved
            obj.__dict__.update(_decode(x["fields"]))
            return obj
        return {k: _decode(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_decode(v) for v in x]
    return x

EVERY = 50  # episodes between two saved states of a training that saves them (SIL-GPO, RSDQL's deployment DQN)


def random_state(rng) -> dict:
    """Both random streams a training draws from: its numpy Generator's and torch's."""
    return {"np_rng": rng.bit_generator.state, "torch_rng": torch.get_rng_state()}


def restore_random(rng, state: dict) -> None:
    rng.bit_generator.state = state["np_rng"]
    torch.set_rng_state(state["torch_rng"])


def save(path: Path, settings: dict, state: dict) -> None:
    """``state`` (nets, optimisers, random streams, buffers of arrays and ``@plain`` objects) with
    the ``settings`` it belongs to. A failed write (a full disk) leaves the previous state and no
    part file, and is one UserError line."""
    tmp = path.with_suffix(path.suffix + ".part")
    try:
        torch.save({"settings": _encode(settings), "state": _encode(state)}, tmp)
        tmp.replace(path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise UserError(f"could not save the training state ({exc.strerror or exc}); the previous one is kept",
                        source=str(path)) from None


def load(path: Path, settings: dict, field: str) -> dict:
    """The state saved at ``path``; one UserError line when there is none, it is not a training
    state (corrupt, truncated, foreign, or holding anything but data), or it was saved for other
    settings (naming the first that differs)."""
    if not path.exists():
        raise UserError("no training state to go on from; drop the flag to start a training", source=str(path),
                        field=field)
    try:
        saved = torch.load(path, weights_only=True)
        saved = {"settings": _decode(saved["settings"]), "state": _decode(saved["state"])}
    except Exception as exc:  # noqa: BLE001 — whatever the file is, the user gets one line
        reason = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else type(exc).__name__
        raise UserError(f"not a training state harness can read ({reason}); start over with --force",
                        source=str(path), field=field) from None
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
