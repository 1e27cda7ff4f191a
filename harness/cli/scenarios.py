"""harness scenarios: the built-in scenarios, one line each."""

from __future__ import annotations

import typer

from harness.cli.main import app


@app.command()
def scenarios() -> None:
    """List the built-in scenarios (give 'harness run' a name from here, or a scenario file's path)."""
    from harness.scenarios.catalog import builtin_names, load_scenario

    for name in builtin_names():
        sc, _ = load_scenario(name)
        print(f"{name:15s} {sc.description}")
