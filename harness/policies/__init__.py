"""Policies, registered by name: one class per policy (name, typed ``Args``, declared abilities,
and for learned policies their trainer), the descheduler's shape without its boilerplate.

Where a policy is found, in order: the modules of this package (a new policy is one new file
with ``@register`` on its class); the entry-point group
``harness.policies`` of any installed distribution (each entry a Policy class); and a
``package.module:Name`` reference given wherever a policy name is asked for.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
from pathlib import Path
from typing import Any

from harness.errors import UserError
from harness.policies.contract import Ability, Policy, validate_args

REGISTRY: dict[str, type[Policy]] = {}
ENTRY_POINT_GROUP = "harness.policies"
_loaded = False


def register(cls: type[Policy]) -> type[Policy]:
    """Class decorator: ``@register`` on a Policy subclass. Checks the declaration is complete:
    Args is a dataclass, every declared ability is implemented, a trainable policy can train."""
    check_declaration(cls)
    REGISTRY[cls.name] = cls
    return cls


def check_declaration(cls: Any) -> None:
    where = f"policy class {getattr(cls, '__module__', '?')}.{getattr(cls, '__qualname__', cls)}"
    for attr in ("name", "Args", "abilities"):
        if not hasattr(cls, attr):
            raise UserError(f"{where} does not declare {attr!r}")
    if not dataclasses.is_dataclass(cls.Args):
        raise UserError(f"{where}: Args must be a dataclass")
    abilities = set(cls.abilities)
    if not abilities & {Ability.PLACE, Ability.PLAN}:
        raise UserError(f"{where} declares neither 'place' nor 'plan'")
    for ability in (Ability.PLACE, Ability.PLAN):
        implemented = getattr(cls, ability.value, None) is not getattr(Policy, ability.value)
        if (ability in abilities) != implemented:
            state = "declares" if ability in abilities else "does not declare"
            raise UserError(f"{where} {state} {ability.value!r} but {'does not' if implemented is False else 'does'} "
                            f"implement it")
    if Ability.TRAIN in abilities and not callable(getattr(cls, "train", None)):
        raise UserError(f"{where} declares 'train' but has no train()")


def _load_all() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    import pkgutil

    for mod in pkgutil.iter_modules(__path__):  # every module of this package; policies register themselves
        importlib.import_module(f"{__name__}.{mod.name}")
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            cls = ep.load()
        except Exception as exc:  # a broken plug-in must not hide the others; say which
            raise UserError(f"entry point {ep.name} = {ep.value} ({ENTRY_POINT_GROUP}) does not load: "
                            f"{type(exc).__name__}: {exc}") from None
        register(cls)


def names() -> list[str]:
    _load_all()
    return sorted(REGISTRY)


def resolve(name: str) -> type[Policy]:
    """The policy class for a registered name or a ``package.module:Name`` reference."""
    _load_all()
    if name in REGISTRY:
        return REGISTRY[name]
    if ":" in name:
        module, _, attr = name.partition(":")
        try:
            cls = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise UserError(f"cannot load policy {name!r}: {exc}", field="policy") from None
        check_declaration(cls)
        return cls
    raise UserError(f"unknown policy {name!r} (known: {', '.join(sorted(REGISTRY))}; or package.module:Class)",
                    field="policy")


def build(name: str, **kwargs) -> Policy:
    cls = resolve(name)
    fields = {f.name for f in dataclasses.fields(cls.Args)}
    unknown = set(kwargs) - fields
    if unknown:
        raise UserError(f"policy {cls.name} has no argument(s) {', '.join(sorted(unknown))} "
                        f"(has: {', '.join(sorted(fields)) or 'none'})", field="policy")
    args = cls.Args(**kwargs)
    validate_args(cls.name, args)
    return cls(args)


def placer_for(policy: Policy) -> Policy:
    """Who places a policy's new pods (deployment, self-healing, scale-ups): the policy itself
    when it can place, else the placer it names (learned reschedulers: the default scheduler)."""
    if policy.can(Ability.PLACE):
        return policy
    return build(policy.placed_by)


def find_model(policy: str, app: str, model_dir: Path) -> Path | None:
    """The model a trainable policy acts with for ``app``: ``<policy>-<app>.pt`` when it exists
    (the committed ones), else the newest model in ``model_dir`` whose metadata names this
    policy and app (``harness train`` names every model after policy, app, seed and time)."""
    canonical = model_dir / f"{policy}-{app}.pt"
    if canonical.exists():
        return canonical
    found = []
    for meta_file in model_dir.glob(f"{policy}-{app}-*.json"):
        try:
            meta = json.loads(meta_file.read_text())
        except (OSError, ValueError):
            continue
        model = meta_file.with_suffix(".pt")
        if meta.get("policy") == policy and meta.get("app") == app and model.exists():
            found.append((meta.get("trained_at", ""), model))
    return max(found)[1] if found else None


def build_for_app(name: str, app: str, app_file: str | Path, profile_file: str | Path, model_dir: Path) -> Policy:
    """A policy ready for ``app``: a trainable one with its model from ``model_dir``; the error
    names the command that makes a missing model."""
    cls = resolve(name)
    if Ability.TRAIN not in cls.abilities:
        return build(name)
    model = find_model(cls.name, app, model_dir)
    if model is None:
        raise UserError(f"no trained {cls.name} model for {app} in {model_dir}; make it with: harness train --app "
                        f"{app_file} --profile {profile_file} --policy {name} --out {model_dir}", field="--policy")
    return build(name, model=str(model))


def build_from_model(path: str | Path) -> Policy:
    """The policy a model file was trained for (its metadata names it), acting with that model."""
    meta_file = Path(path).with_suffix(".json")
    try:
        meta = json.loads(meta_file.read_text())
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read the model's metadata ({exc})", source=str(meta_file)) from None
    return build(meta["policy"], model=str(path))
