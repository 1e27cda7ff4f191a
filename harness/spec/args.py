"""Typed argument dataclasses as command-line flags (CleanRL's way: the dataclass is the CLI).

Every field of an Args dataclass becomes ``--field-name`` with its type, default and help
(``arg(default, "help")``); ``--flag``/``--no-flag`` for booleans, two values for a pair.
"""

from __future__ import annotations

import argparse
import dataclasses
import typing
from typing import Any

from harness.errors import UserError


def arg(default: Any, help: str, **kw) -> Any:
    """A dataclass field with its help text (shown by ``harness train --help``)."""
    if isinstance(default, (list, dict, set)):
        return dataclasses.field(default_factory=lambda: type(default)(default), metadata={"help": help}, **kw)
    return dataclasses.field(default=default, metadata={"help": help}, **kw)


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _base(tp) -> tuple[Any, bool]:
    """(the type without None, whether None is allowed)."""
    args = typing.get_args(tp)
    if type(None) in args:
        rest = [a for a in args if a is not type(None)]
        return rest[0], True
    return tp, False


def add_flags(parser: argparse.ArgumentParser, cls: type, skip: tuple[str, ...] = (), title: str | None = None) -> None:
    hints = typing.get_type_hints(cls)
    group = parser.add_argument_group(title or cls.__name__)
    for f in dataclasses.fields(cls):
        if f.name in skip:
            continue
        tp, optional = _base(hints[f.name])
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        text = f.metadata.get("help", "")
        shown = f"{text} (default: {default})" if text else f"default: {default}"
        if tp is bool:
            group.add_argument(flag(f.name), dest=f.name, action=argparse.BooleanOptionalAction, default=default,
                               help=text or None)
        elif typing.get_origin(tp) is tuple:
            inner = typing.get_args(tp)
            group.add_argument(flag(f.name), dest=f.name, nargs=len(inner), type=inner[0], default=default,
                               metavar=tuple(t.__name__.upper() for t in inner), help=shown)
        else:
            conv = (lambda s, tp=tp: None if s.lower() == "none" else tp(s)) if optional else tp
            group.add_argument(flag(f.name), dest=f.name, type=conv, default=default, metavar=tp.__name__.upper(),
                               help=shown + (" (or 'none')" if optional else ""))


def parse_flags(argv: list[str], classes: dict[str, type], aliases: dict[str, str] | None = None,
                skip: tuple[str, ...] = (), prog: str = "harness") -> dict[str, Any]:
    """Parse ``argv`` into one instance per dataclass of ``classes`` (title -> class). Unknown or
    badly typed flags are a one-line UserError."""
    parser = build_parser(classes, skip, prog)
    for alias, target in (aliases or {}).items():
        argv = [flag(target) if a == flag(alias) else a for a in argv]

    def fail(message: str):
        raise UserError(message, field="flags")
    parser.error = fail  # argparse would print and exit; a user error is one line and status 2
    ns = vars(parser.parse_args(argv))
    out = {}
    for title, cls in classes.items():
        names = [f.name for f in dataclasses.fields(cls) if f.name not in skip]
        values = {n: (tuple(ns[n]) if isinstance(ns[n], list) else ns[n]) for n in names}
        try:
            out[title] = cls(**values)
        except (TypeError, ValueError) as exc:
            raise UserError(str(exc), field="flags") from None
    return out


def build_parser(classes: dict[str, type], skip: tuple[str, ...] = (), prog: str = "harness") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, add_help=False, allow_abbrev=False)
    for title, cls in classes.items():
        add_flags(parser, cls, skip, title)
    return parser


def flags_help(classes: dict[str, type], skip: tuple[str, ...] = ()) -> str:
    """The flags' help as argparse formats it (for a command's --help)."""
    text = build_parser(classes, skip).format_help()
    return text[text.index("\n\n") + 2:]  # the groups, without argparse's usage line
