"""The one Rich console the commands print through. On a terminal, Rich fits its width; into a
pipe or a log file Rich would cut everything to 80 columns with "…" (a status table's node names,
a comparison's every number), so there the width is unbounded: tables take their natural width
and no line is cut."""

from __future__ import annotations

import sys

PIPE_WIDTH = 10_000  # wider than any table harness prints: nothing is cut


def console(stderr: bool = False):
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    if stream.isatty():
        return Console(stderr=stderr)
    return Console(stderr=stderr, width=PIPE_WIDTH, soft_wrap=True)


def print_json(obj) -> None:
    """Machine-readable output on stdout (progress and warnings stay on stderr): ``--json``."""
    import json

    print(json.dumps(obj, indent=1, default=str))
