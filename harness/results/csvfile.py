"""Rows of dicts as one CSV file, the columns those of the first row: what the studies write; and
read back typed, as ``--json`` prints them (numbers as numbers, an empty cell as null)."""

from __future__ import annotations

import csv
from pathlib import Path


def write_rows(path: Path, rows: list[dict]) -> Path:
    """Write ``rows`` to ``path`` (its folder made), a header of the first row's keys; ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return path


def typed(cell: str):
    """A CSV cell as JSON would hold it: '' -> None, 'True'/'False' -> bool, a number -> int or
    float (nan and inf as None: JSON has neither), anything else the string."""
    if cell == "":
        return None
    if cell in ("True", "False"):
        return cell == "True"
    try:
        return int(cell)
    except ValueError:
        pass
    try:
        x = float(cell)
    except ValueError:
        return cell
    return x if x == x and x not in (float("inf"), float("-inf")) else None


def read_rows(path: Path) -> list[dict]:
    """The rows of a CSV file, each cell ``typed``."""
    with open(path, newline="") as f:
        return [{k: typed(v) for k, v in row.items()} for row in csv.DictReader(f)]
