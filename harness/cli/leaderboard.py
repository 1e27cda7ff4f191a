"""harness leaderboard: every policy on a leaderboard file's tracks, ranked."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import typer

from harness.cli.main import app


@app.command()
def leaderboard(
    file: Path = typer.Argument(..., help="A leaderboard file (e.g. leaderboards/seeds.yaml): versioned tracks, each "
                                "an inventory, apps, scenarios and the metric it ranks by."),
    mode: str = typer.Option("sim", "--mode", help="sim: every cell played in simulation (live: not yet)."),
    seeds: int = typer.Option(3, "--seeds", min=1, help="Seeds per (app, scenario): the same for every policy."),
    jobs: int = typer.Option(2, "--jobs", "-j", min=1, help="Cells played at once (processes)."),
    model_dir: Path = typer.Option(Path("models"), "--model-dir", help="Where the learned policies' models are."),
    out: Path = typer.Option(None, "--out", help="Results folder (default results/<utc>-leaderboard-<name>)."),
    json_out: bool = typer.Option(False, "--json", help="Print {folder, ranked: ranked-sim.csv's rows, coverage: "
                                  "coverage.csv's rows, failed_cells} as JSON instead of the tables."),
    ray: str = typer.Option(None, "--ray", help="Play the cells on Ray: 'local' starts a local instance of --jobs "
                            "CPUs, else the cluster's address (e.g. ray://head:10001); needs the leaderboard extra. "
                            "The same rows as the process pool, from the same seeds."),
) -> None:
    """Every registered policy (and any named in the file, package.module:Class) on every track its
    abilities fit, in simulation: one run directory per (track, app, scenario, policy, seed) under
    --out/runs, the long table of every number (leaderboard.csv, and .parquet with pyarrow), the
    ranked table per track (mean ± 95 % CI over its (app, scenario) settings, rank, ratio to default paired by setting: ranked-sim.csv)
    and the coverage matrix (coverage.csv: ran, no model, or the ability that does not fit). A
    failed cell is played once more, then reported in leaderboard.json, never dropped."""
    from harness.cli.output import console as make_console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from harness import shipped
    from harness.errors import UserError
    from harness.leaderboard import sweep, tables
    from harness.leaderboard.spec import load_leaderboard

    if mode != "sim":
        raise UserError(f"expected sim, got {mode!r} (live and both: not yet)", field="--mode")
    board = load_leaderboard(file)
    out = out or Path("results") / f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-leaderboard-{board.name}"
    console = make_console(stderr=True)
    console.print(f"leaderboard {board.name} v{board.version}: {len(board.tracks)} tracks, {seeds} seeds, "
                  f"{'Ray ' + ray if ray else f'{jobs} processes'}; results in {out}")
    with Progress(TextColumn("cells"), BarColumn(), TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(),
                  console=console, transient=True) as bar:
        task = bar.add_task("cells", total=None)
        result = sweep.run(file, out, seeds, jobs, shipped.find(model_dir),
                           lambda done, total: bar.update(task, completed=done, total=total), ray=ray)
    coverage_file, coverage_text = tables.write_coverage(board, result.coverage, result.failed, out)
    if json_out:
        import csv

        from harness.cli.output import print_json

        read = lambda f: list(csv.DictReader(open(f)))  # noqa: E731
        print_json({"folder": str(out), "ranked": read(out / "ranked-sim.csv"), "coverage": read(coverage_file),
                    "failed_cells": [{"cell": list(k), "error": e} for k, e in sorted(result.failed.items())]})
    else:
        print(tables.ranked_text(board, result.rows))
        print(coverage_text)
    for key, error in sorted(result.failed.items()):
        print(f"harness: error: cell {'/'.join(map(str, key))} failed twice: {error}", file=sys.stderr)
    print(f"\n{len(result.rows)} numbers from {out / 'runs'} in {result.seconds:.0f} s: {out / 'leaderboard.csv'}",
          file=sys.stderr if json_out else sys.stdout)
    if result.failed:
        raise typer.Exit(1)
