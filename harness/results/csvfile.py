"""Rows of dicts as one CSV file, the columns those of the first row: what the studies write; and
read back typed, as ``--json`` prints them (numbers as numbers, an empty cell as null). A log
written row by row (``requests.csv``) read back whole rows only (``complete_rows``)."""

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


def complete_rows(path: Path) -> tuple[str, int, int]:
    """The text of a CSV file written row by row, with only its whole rows: ``(text, cut,
    malformed)``. ``cut`` is 1 when the file does not end with a newline (its writer stopped
    mid-row: a crash, kill -9, a full disk), that last line dropped; ``malformed`` counts the
    rows dropped for having more or fewer fields than the header. Raises ``UnicodeDecodeError``
    (a ``ValueError``) for text that is not UTF-8 before the cut."""
    data = path.read_bytes()
    cut = 0
    if data and not data.endswith(b"\n"):
        data, cut = data[:data.rfind(b"\n") + 1], 1
    lines = [line + "\n" for line in data.decode("utf-8").split("\n")[:-1]]  # the rows' own ends, no others
    reader = csv.reader(lines)
    header = next(reader, None)
    if header is None:
        return "", cut, 0
    kept, malformed, start = lines[:reader.line_num], 0, reader.line_num
    for row in reader:  # a quoted field may span lines: each row's lines are those the reader took
        if not row or len(row) == len(header):
            kept += lines[start:reader.line_num]
        else:
            malformed += 1
        start = reader.line_num
    return "".join(kept), cut, malformed


def dropped_rows(path: Path, cut: int, malformed: int) -> str | None:
    """The one line that says what ``complete_rows`` left out of ``path``; None when nothing."""
    if not cut and not malformed:
        return None
    n = cut + malformed
    why = (["the last, cut mid-line (its writer stopped mid-row)"] if cut else []) + \
        ([f"{malformed} with more or fewer fields than its header"] if malformed else [])
    return f"{path}: {n} incomplete row{'' if n == 1 else 's'} skipped: {' and '.join(why)}"
