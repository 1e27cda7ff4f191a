"""harness validate: check an app and print its call graph."""

from __future__ import annotations

import sys

from pathlib import Path

import typer

from harness.cli.main import app, warn_app


def describe_app(a) -> list[str]:
    lines = [f"app '{a.name}': {len(a.services)} services, {a.total_pods()} pods, gateway {a.gateway}"]
    for name, s in a.services.items():
        lines.append(f"  {name}: job {s.job}, {s.replicas} replica(s), requests cpu {a.cpu_request(name):g} "
                     f"cores, memory {a.memory_request(name):g} MiB")
        for gi, g in enumerate(s.external_services):
            calls = ", ".join(f"{c}" + (f" (p={g.probabilities[c]:g})" if c in g.probabilities else "") for c in g.services)
            mode = "all in sequence" if g.seq_len >= len(g.services) else f"{g.seq_len} of them at random, in sequence"
            lines.append(f"    group {gi} (parallel with the others): {calls or '(empty)'} — {mode}")
    return lines


@app.command()
def validate(app_file: Path = typer.Argument(..., help="App: a μBench workmodel JSON, bare or {name, gateway, services}.")) -> None:
    """Check an app and print its services, call graph (parallel groups, sequential calls), replicas and requests."""
    from harness.errors import UserError
    from harness.spec.app import load_app

    try:
        a = load_app(app_file)
    except UserError as exc:
        if not exc.more:
            raise
        for line in [str(exc).rsplit(" (and ", 1)[0]] + exc.more:  # every problem, one line each
            print(f"harness: error: {line}", file=sys.stderr)
        raise typer.Exit(2) from None
    warn_app(a, app_file)
    print("\n".join(describe_app(a)))
