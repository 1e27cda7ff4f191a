"""Names that become file names, labels and YAML values, checked once where a file is parsed.

An app's, a scenario's, a testbed's name goes into file names (``profiles/<app>.<testbed>.json``,
``results/<utc>-<scenario>/``, ``models/<policy>-<app>.pt``) and into Kubernetes label values
(``harness.io/app``): so it is a Kubernetes label value — letters, digits, ``-``, ``_``, ``.``,
beginning and ending with a letter or digit, at most 63 characters — which can hold no ``/``, no
whitespace, no newline and cannot be ``.`` or ``..``. What Kubernetes sees as an object's name
(a service) is a DNS-1123 label (``harness.spec.app``). Apps deployed together are named by their
names joined with ``+`` (a file name, never a label: see ``label_value``).
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator

NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
NAME_MAX = 63
RULE = ("letters, digits, '-', '_' or '.', beginning and ending with a letter or digit, at most "
        f"{NAME_MAX} characters (a Kubernetes label value; it becomes a file name)")


def check_name(value: str, joined: bool = False) -> str:
    """``value`` if it is a name (``joined``: names joined with '+'), else ValueError saying what
    a name is."""
    parts = value.split("+") if joined and isinstance(value, str) else [value]
    if not all(isinstance(p, str) and NAME.match(p) and len(p) <= NAME_MAX for p in parts):
        raise ValueError(f"expected {RULE}{' (apps deployed together: such names joined with +)' if joined else ''}, got {value!r}")
    return value


Name = Annotated[str, AfterValidator(check_name)]
JoinedName = Annotated[str, AfterValidator(lambda v: check_name(v, joined=True))]  # an app, or apps deployed together


def as_name(text: str, default: str = "app") -> str:
    """A name made of any text (a file's stem): what is not allowed becomes '-'."""
    name = re.sub(r"[^-A-Za-z0-9_.]+", "-", text)[:NAME_MAX].strip("-_.")
    return name or default


def label_value(name: str) -> str:
    """A name as a Kubernetes label value (names joined with '+' joined with '.' instead)."""
    return name.replace("+", ".")[:NAME_MAX].strip("-_.")
