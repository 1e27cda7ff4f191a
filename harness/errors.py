"""Errors a user can fix. The CLI prints them as one line and exits with status 2."""

from __future__ import annotations


class UserError(Exception):
    """A mistake in what the user gave us: a file, a field, a flag, or the testbed's state."""

    def __init__(self, message: str, *, source: str | None = None, field: str | None = None,
                 more: list[str] | None = None):
        self.source = source
        self.field = field
        self.detail = message
        self.more = list(more or [])  # further problems of the same input, each a line (harness validate prints them)
        parts = [p for p in (source, field) if p]
        line = f"{': '.join(parts)}: {message}" if parts else message
        if self.more:
            line += f" (and {len(self.more)} more problem{'s' if len(self.more) > 1 else ''})"
        super().__init__(line)


class TestbedError(RuntimeError):
    """The testbed could not do what was asked (a command failed, a node is missing)."""


class OutputError(RuntimeError):
    """Results could not be written (disk full, read-only): the run stops at once and says where."""


class PolicyError(RuntimeError):
    """A policy (user code) failed where the run cannot go on without it (placing the app at
    deployment): the CLI prints it as one line and exits with status 1."""
