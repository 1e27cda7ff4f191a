"""Policies, registered by name: the descheduler's shape (name + typed args + defaults +
validation + builder), without its boilerplate.

A policy may ``place`` (choose a node for a new pod: initial deployment, self-healing,
autoscaling) and/or choose the ``next_move`` (one rescheduling move, or None for idle). Both
work on the simulator's state (Dynamics + Batch, environment ``b``), which the live
rescheduler builds from the cluster too, so a policy trained in simulation runs unchanged.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from harness.errors import UserError

REGISTRY: dict[str, tuple[type, Callable[..., Any]]] = {}


def register(name: str, args: type):
    """Decorator: ``@register("default", DefaultArgs)`` on a builder ``f(args) -> policy``."""
    def deco(builder):
        REGISTRY[name] = (args, builder)
        return builder
    return deco


def names() -> list[str]:
    _load_all()
    return sorted(REGISTRY)


def build(name: str, **kwargs):
    _load_all()
    if name not in REGISTRY:
        raise UserError(f"unknown policy {name!r} (known: {', '.join(sorted(REGISTRY))})", field="policy")
    args_type, builder = REGISTRY[name]
    fields = {f.name for f in dataclasses.fields(args_type)}
    unknown = set(kwargs) - fields
    if unknown:
        raise UserError(f"policy {name} has no argument(s) {', '.join(sorted(unknown))} (has: {', '.join(sorted(fields))})")
    args = args_type(**kwargs)
    if hasattr(args, "validate"):
        args.validate()
    return builder(args)


def _load_all() -> None:
    from harness.policies import heuristics, optimal, reach, rsdql  # noqa: F401  (they register themselves)
