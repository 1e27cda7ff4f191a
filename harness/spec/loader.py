"""Read YAML/JSON files into pydantic models, turning every failure into one UserError line.

The line names the file, the field path and what was expected, e.g.
``inv.yaml: node_types.edge-a.speed: must be > 0``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from harness.errors import UserError

M = TypeVar("M", bound=BaseModel)


def read_document(path: str | Path) -> Any:
    """Parse a YAML or JSON file (JSON is YAML, but JSON errors read better from json)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError("file not found", source=str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read file ({exc.__class__.__name__}: {exc})", source=str(path)) from None
    try:
        if path.suffix == ".json":
            return json.loads(text)
        return _yaml(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}", source=str(path)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise UserError(f"invalid YAML{where}: {problem}", source=str(path)) from None


def _yaml(text: str) -> Any:
    """YAML through libyaml when it is there (a ten-thousand-node inventory in a fraction of the
    time); a file it refuses is read again by the Python parser, whose error is the one shown."""
    fast = getattr(yaml, "CSafeLoader", None)
    if fast is not None:
        try:
            return yaml.load(text, Loader=fast)
        except yaml.YAMLError:
            pass
    return yaml.safe_load(text)


def field_path(loc: tuple[Any, ...]) -> str:
    """('nodes', 3, 'type') -> 'nodes[3].type'."""
    out = ""
    for part in loc:
        if isinstance(part, str) and "[" in part:
            continue  # pydantic's name for a validator or a union branch (function-after[…], list[…]), not a field
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


def _describe(err: dict[str, Any]) -> str:
    msg = err["msg"]
    # pydantic prefixes custom errors with "Value error, "; the user does not need it.
    for prefix in ("Value error, ", "Assertion failed, "):
        if msg.startswith(prefix):
            msg = msg[len(prefix):]
    if err["type"] == "missing":
        return "required field is missing"
    if err["type"] == "extra_forbidden":
        return "unknown field"
    if err["type"] == "greater_than":
        return f"must be > {err['ctx']['gt']}"
    if err["type"] == "greater_than_equal":
        return f"must be ≥ {err['ctx']['ge']}"
    return msg[0].lower() + msg[1:] if msg else "invalid value"


def _fields_at(model: Any, loc: tuple[Any, ...]) -> list[str]:
    """The field names the model allows where ``loc`` points (best effort through dicts, lists
    and optionals), for a did-you-mean on an unknown field."""
    import typing

    tp = model
    for part in loc:
        while typing.get_origin(tp) in (typing.Union, getattr(__import__("types"), "UnionType", None)):
            tp = next((a for a in typing.get_args(tp) if a is not type(None)), tp)
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            if part not in tp.model_fields:
                return []
            tp = tp.model_fields[part].annotation
        elif typing.get_origin(tp) in (dict, list, tuple):
            tp = typing.get_args(tp)[-1] if typing.get_args(tp) else None
        else:
            return []
    while typing.get_origin(tp) in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        tp = next((a for a in typing.get_args(tp) if a is not type(None)), tp)
    return list(tp.model_fields) if isinstance(tp, type) and issubclass(tp, BaseModel) else []


def validation_error(exc: ValidationError, source: str, model: Any = None) -> UserError:
    """A pydantic ValidationError as one UserError: the first problem, naming the file and field,
    and every further problem in ``more`` (counted on the line; ``harness validate`` prints each);
    an unknown field with the nearest allowed name."""
    import difflib

    lines, branch_of = [], {}
    for err in exc.errors():
        loc = tuple(err["loc"])
        # a union (a load or a list of loads) fails once per branch: the first branch's problems are the ones to read
        i = next((k for k, part in enumerate(loc) if isinstance(part, str) and "[" in part), None)
        if i is not None and branch_of.setdefault(loc[:i], loc[i]) != loc[i]:
            continue
        text = _describe(err)
        if err["type"] == "extra_forbidden" and model is not None and loc:
            near = difflib.get_close_matches(str(loc[-1]), _fields_at(model, loc[:-1]), n=1)
            if near:
                text += f" (did you mean {near[0]!r}?)"
        lines.append((field_path(loc), text))
    first_field, first = lines[0]
    return UserError(first, source=source, field=first_field, more=[f"{source}: {f}: {t}" for f, t in lines[1:]])


def load_model(model: type[M], path: str | Path) -> M:
    """Load and validate ``path`` as ``model``; any problem becomes a one-line UserError."""
    data = read_document(path)
    return parse_model(model, data, str(path))


def parse_model(model: type[M], data: Any, source: str) -> M:
    if data is None:
        raise UserError("file is empty", source=source)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc, source, model) from None
