"""Rows of dicts as one CSV file, the columns those of the first row: what the studies write."""

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
