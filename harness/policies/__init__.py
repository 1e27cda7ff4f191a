"""Policies, registered by name: one class per policy (name, typed ``Args``, declared abilities,
and for learned policies their trainer), the descheduler's shape without its boilerplate.

Where a policy is found, in order: the modules of this package and the families'
(``harness.families``: a new policy is one new file with ``@register`` on its class, imported by
its family's ``__init__``); the entry-point group
``harness.policies`` of any installed distribution (each entry a Policy class); and a
``package.module:Name`` reference given wherever a policy name is asked for.

Wherever a policy is named, its arguments may follow in brackets: ``rollout[base=default]``,
``kubedsm[variant=noedgemig,batch=20]``, ``reach[model=models/other.pt]`` (each a field of the
policy's ``Args``, typed as ``harness train``'s flags are); such a policy runs under that label,
so two settings of one policy can be compared in one session.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
from pathlib import Path
from typing import Any

from harness import shipped
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


def load_all() -> None:
    """Every policy and world learner registered: this package's modules, the families', the
    installed plug-ins'."""
    _load_all()


def _load_all() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    import pkgutil

    for mod in pkgutil.iter_modules(__path__):  # every module of this package; policies register themselves
        importlib.import_module(f"{__name__}.{mod.name}")
    importlib.import_module("harness.families").load()  # the papers' families register theirs (never imported statically)
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
    if name.endswith("@cluster"):  # the one ground's own world, said
        name = name.removesuffix("@cluster")
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
    from harness.policies.catalog import elsewhere

    if (why := elsewhere(name)) is not None:
        raise UserError(why, field="policy")
    raise UserError(f"unknown policy {name!r} (known here: {', '.join(sorted(REGISTRY))}; or package.module:Class; "
                    f"every world's: harness policies)", field="policy")


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
    canonical = shipped.model(policy, app, model_dir)
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


def split_refs(text: str) -> list[str]:
    """``'a,b[x=1,y=2],c'`` -> ``['a', 'b[x=1,y=2]', 'c']``: a comma inside brackets is an argument's."""
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "[") - (ch == "]")
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    out.append(cur.strip())
    if depth:
        raise UserError(f"unbalanced brackets in {text!r} (expected name[key=value,...])", field="--policy")
    return [r for r in out if r]


def parse_ref(ref: str) -> tuple[str, dict[str, str]]:
    """``'rollout[base=default,beta=0.9]'`` -> ``('rollout', {'base': 'default', 'beta': '0.9'})``."""
    if "[" not in ref:
        return ref, {}
    if not ref.endswith("]"):
        raise UserError(f"{ref!r}: expected name[key=value,...]", field="--policy")
    name, _, inner = ref[:-1].partition("[")
    args = {}
    for part in (x.strip() for x in inner.split(",") if x.strip()):
        key, eq, value = part.partition("=")
        if not eq or not key.strip():
            raise UserError(f"{ref!r}: {part!r} is not key=value", field="--policy")
        args[key.strip().replace("-", "_")] = value.strip()
    return name.strip(), args


def typed_args(cls: type[Policy], raw: dict[str, str], ref: str) -> dict[str, Any]:
    """``raw`` (strings) typed by the policy's Args, as ``harness train``'s flags are typed."""
    import argparse
    import typing

    from harness.spec.args import add_flags, flag

    fields = {f.name for f in dataclasses.fields(cls.Args)}
    unknown = sorted(set(raw) - fields)
    if unknown:
        import difflib

        near = [m for u in unknown for m in difflib.get_close_matches(u, fields, n=1)]
        raise UserError(f"{ref!r}: policy {cls.name} has no argument(s) {', '.join(unknown)}"
                        + (f" (did you mean {', '.join(near)}?)" if near else "")
                        + f" (has: {', '.join(sorted(fields)) or 'none'})", field="--policy")
    parser = argparse.ArgumentParser(prog=cls.name, add_help=False, exit_on_error=False)
    add_flags(parser, cls.Args)
    hints = typing.get_type_hints(cls.Args)
    argv: list[str] = []
    for key, value in raw.items():
        if hints[key] is bool or hints[key] == "bool":
            truth = value.lower() in ("1", "true", "yes", "on")
            if not truth and value.lower() not in ("0", "false", "no", "off"):
                raise UserError(f"{ref!r}: {key} expects true or false, got {value!r}", field="--policy")
            argv.append(flag(key) if truth else flag("no_" + key))
        else:
            argv += [flag(key), *value.split(";")]  # a pair: a;b
    try:
        parsed = parser.parse_args(argv)
    except (argparse.ArgumentError, SystemExit) as exc:
        raise UserError(f"{ref!r}: {exc}", field="--policy") from None
    return {k: getattr(parsed, k) for k in raw}


def label(ref: str, policy: Policy | type[Policy]) -> str:
    """The name a policy runs under: its own (a module:Class reference's declared name), or with
    the arguments it was given (``rollout[base=default]``)."""
    _, raw = parse_ref(ref)
    return policy.name if not raw else f"{policy.name}[{','.join(f'{k}={v}' for k, v in raw.items())}]"


def build_ref(ref: str, **extra) -> Policy:
    """A policy from a reference with its arguments (``name[key=value,...]``)."""
    name, raw = parse_ref(ref)
    return build(name, **{**typed_args(resolve(name), raw, ref), **extra})


def build_for_app(name: str, app: str, app_file: str | Path, profile_file: str | Path, model_dir: Path,
                  notes: list[str] | None = None) -> Policy:
    """A policy ready for ``app`` (``name`` may carry arguments: ``name[key=value,...]``): a
    trainable one with its model from ``model_dir`` unless a ``model`` is given — ``model=auto``:
    the model of this profile, trained once with the policy's fast recipe and kept by the
    profile's hash (``auto_model``); ``model=auto:RECIPE``: the same with another of its
    recipes. The error names the command that makes a missing model; ``notes`` gets one line when
    the model was trained on another profile."""
    ref = name
    name, raw = parse_ref(ref)
    cls = resolve(name)
    kwargs = typed_args(cls, raw, ref)
    if Ability.TRAIN not in cls.abilities:
        return build(name, **kwargs)
    auto, _, recipe = str(kwargs.get("model")).partition(":")
    if auto == "auto":  # model=auto, or model=auto:RECIPE
        if recipe:
            from harness.policies.learned import recipe_flags

            recipe_flags(cls, recipe, field="--policy")  # an unknown one: refused before any training
        kwargs["model"] = str(auto_model(cls, app_file, profile_file, model_dir, recipe or None))
    elif "model" not in kwargs:
        model = find_model(cls.name, app, model_dir)
        if model is None:
            raise UserError(f"no trained {cls.name} model for {app} in {model_dir}; make it with: harness train --app "
                            f"{app_file} --profile {profile_file} --policy {name} --out {model_dir} (or --policy "
                            f"{name}[model=auto])", field="--policy")
        kwargs["model"] = str(model)
    policy = build(name, **kwargs)
    if notes is not None and (line := _provenance_note(cls, policy, app_file, profile_file)):
        notes.append(line)
    return policy


def auto_recipe(cls) -> str | None:
    """The recipe ``model=auto`` trains with: the policy's ``fast`` one, else its first."""
    recipes = getattr(cls, "recipes", {})
    return "fast" if "fast" in recipes else next(iter(recipes), None)


def _provenance_note(cls, policy: Policy, app_file, profile_file) -> str | None:
    from harness.policies import provenance
    from harness.spec.app import load_app
    from harness.spec.profile import load_profile

    meta = getattr(policy, "meta", None)
    if not meta:
        return None
    return provenance.mismatch(cls.name, policy.args.model, meta, load_app(app_file), app_file, profile_file,
                               load_profile(profile_file), auto_recipe(cls))


def auto_model(cls, app_file: str | Path, profile_file: str | Path, model_dir: Path,
               recipe: str | None = None) -> Path:
    """The model of ``cls`` for this app and profile: ``<model_dir>/auto/<policy>-<app>-<hash>.pt``,
    trained with the policy's ``fast`` recipe (else its first) when it is not there yet; with
    another ``recipe``, ``<policy>-<app>-<recipe>-<hash>.pt`` trained with that one."""
    import sys

    from harness.policies import provenance
    from harness.policies.learned import train_and_save, training_config
    from harness.sim.ceenv import load_dynamics
    from harness.spec.profile import load_profile

    profile = load_profile(profile_file)
    from harness.spec.app import load_app

    app = load_app(app_file)
    default = auto_recipe(cls)
    recipe = recipe or default
    named = f"{cls.name}-{app.name}" + (f"-{recipe}" if recipe != default else "")
    path = Path(model_dir) / "auto" / f"{named}-{provenance.digest(profile)[:12]}.pt"
    if path.exists():
        print(f"{cls.name}: the model of this profile, trained before: {path}", file=sys.stderr)
        return path
    args, env = training_config(cls, [], recipe)
    print(f"{cls.name}: no model of {profile_file} yet; training one ({recipe or 'default'} recipe, "
          f"{args.total_steps:,} steps) into {path}", file=sys.stderr, flush=True)
    a, prof, dyn = load_dynamics(app_file, profile_file, None, env)
    marks = iter(range(1, 11))
    next_mark = [next(marks)]

    def progress(step: int, ret: float) -> None:
        if step >= next_mark[0] * args.total_steps / 10:
            print(f"  {cls.name}: {step:,}/{args.total_steps:,} steps, return {ret:.1f}", file=sys.stderr, flush=True)
            next_mark[0] = next(marks, 11)
    path.parent.mkdir(parents=True, exist_ok=True)
    train_and_save(cls, dyn, args, a.name, str(profile_file), prof.testbed, path.parent, path.stem, True, progress,
                   recipe, prof)
    return path


def build_from_model(path: str | Path) -> Policy:
    """The policy a model file was trained for (its metadata names it), acting with that model."""
    meta_file = Path(path).with_suffix(".json")
    try:
        meta = json.loads(meta_file.read_text())
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read the model's metadata ({exc})", source=str(meta_file)) from None
    return build(meta["policy"], model=str(path))
