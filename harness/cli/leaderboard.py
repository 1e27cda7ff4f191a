"""harness leaderboard: every policy on a leaderboard file's tracks, ranked."""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from pathlib import Path

import typer

from harness.cli.main import app


@app.command()
def leaderboard(
    ctx: typer.Context,
    file: Path = typer.Argument(..., help="A leaderboard file (e.g. leaderboards/seeds.yaml): versioned tracks, each "
                                "an inventory, apps, scenarios and the metric it ranks by."),
    mode: str = typer.Option("sim", "--mode", help="sim: every cell in simulation; live: every cell of the tracks "
                             "whose inventory the provisioned testbed is, played on it one after another (seed k "
                             "seeds the load); both: the two, with the ranks' agreement (Spearman's ρ) per track."),
    seeds: int = typer.Option(3, "--seeds", min=1, help="Seeds per (app, scenario): the same for every policy."),
    seed: int = typer.Option(0, "--seed", min=0, help="The first seed (--seeds N plays seeds S..S+N-1)."),
    jobs: int = typer.Option(2, "--jobs", "-j", min=1, help="Cells played at once (processes)."),
    model_dir: Path = typer.Option(Path("models"), "--model-dir", help="Where the learned policies' models are."),
    out: Path = typer.Option(None, "--out", help="Results folder (default results/<utc>-leaderboard-<name>)."),
    json_out: bool = typer.Option(False, "--json", help="Print {folder, ranked: ranked-sim.csv's rows, coverage: "
                                  "coverage.csv's rows, failed_cells} as JSON instead of the tables."),
    ray: str = typer.Option(None, "--ray", help="Play the cells on Ray: 'local' starts a local instance of --jobs "
                            "CPUs, else the cluster's address (e.g. ray://head:10001); needs the leaderboard extra. "
                            "The same rows as the process pool, from the same seeds."),
    train: bool = typer.Option(False, "--train", help="First train every model a learned policy lacks here (the "
                               "coverage's 'no model') into --model-dir with the file's train: flags, in --jobs "
                               "processes or on --ray; then play."),
    cell_budget: float = typer.Option(3600.0, "--cell-budget", min=0.001, help="Seconds of wall clock a simulated "
                                      "cell may play, in the process pool or on Ray: past it the cell is reported "
                                      "timed out (its worker killed) and the other cells go on."),
    resume: bool = typer.Option(False, "--resume", help="Go on with the stopped sweep in --out (Ctrl-C, a crash, "
                                "the end of a session): its finished cells are kept, the others played."),
) -> None:
    """Every registered policy (and any named in the file, package.module:Class) on every track its
    abilities fit, in simulation: one run directory per (track, app, scenario, policy, seed) under
    --out/runs, the long table of every number (leaderboard.csv, and .parquet with pyarrow), the
    ranked table per track (mean ± 95 % CI over its (app, scenario) settings, rank, ratio to the
    track's reference — default unless the track names another — paired by setting: ranked-sim.csv)
    and the coverage matrix (coverage.csv: ran, no model, or the ability that does not fit). A
    failed cell is played once more, then reported in leaderboard.json, never dropped. The long
    table is saved as cells finish: a stopped sweep goes on with --resume --out DIR. Ctrl-C stops
    the simulated cells at once; the cells finished by then are ranked (leaderboard.json marked
    interrupted), exit status 130."""
    from harness.cli.output import console as make_console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from harness import shipped
    from harness.errors import UserError
    from harness.leaderboard import sweep, tables
    from harness.leaderboard.spec import load_leaderboard

    if mode not in ("sim", "live", "both"):
        raise UserError(f"expected sim, live or both, got {mode!r}", field="--mode")
    board = load_leaderboard(file)
    from harness.leaderboard.cells import check_policies

    check_policies(board, file)  # before the banner and the folder
    if resume and out is None:
        raise UserError("give the stopped sweep's folder with --out", field="--resume")
    out = out or Path("results") / f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-leaderboard-{board.name}"
    if resume:
        sweep.resumed(file, out)  # nothing to resume there: one line before the folder is made
    ctx.with_resource(sweep.writer(out))  # one writer per --out, held to the end (made here: the lock is in it)
    console = make_console(stderr=True)
    console.print(f"leaderboard {board.name} v{board.version}: {len(board.tracks)} tracks, {seeds} seeds, "
                  f"{'Ray ' + ray if ray else f'{jobs} processes'}; results in {out}")
    if train:
        from harness.leaderboard import training

        with Progress(TextColumn("models"), BarColumn(), TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(),
                      console=console, transient=True) as bar:
            task = bar.add_task("models", total=None)
            model_dir.mkdir(parents=True, exist_ok=True)  # a new folder is the one meant, not harness's own
            made, failed = training.run(board, shipped.find(model_dir), jobs, ray,
                                        lambda done, total: bar.update(task, completed=done, total=total))
        console.print(f"trained {len(made)} model{'' if len(made) == 1 else 's'} into {model_dir}" + "".join(f"\n  {m.name}" for m in made))
        for model, error in failed.items():
            console.print(f"harness: error: training {model.name} failed twice (its cells sit out): {error}")
    try:
        with testbed(ctx, mode) as (cluster, state_dir), \
                Progress(TextColumn("cells"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                         TimeElapsedColumn(), console=console, transient=True) as bar:
            task = bar.add_task("cells", total=None)
            result = sweep.run(file, out, seeds, jobs, shipped.find(model_dir),
                               lambda done, total: bar.update(task, completed=done, total=total), ray=ray, mode=mode,
                               cluster=cluster, state_dir=state_dir, resume=resume, first_seed=seed,
                               cell_budget_s=cell_budget)
    except sweep.Interrupted as stopped:
        console.print(f"harness: leaderboard interrupted: {len(stopped.sweep.rows)} numbers of the cells played kept in "
                      f"{out} (its tables and leaderboard.json, marked interrupted; {stopped.sweep.left} cells not "
                      f"played): harness leaderboard {file} --resume --out {out} --seeds {seeds} plays them")
        raise KeyboardInterrupt from None
    for track, why in result.not_live.items():
        console.print(f"harness: {track} not played live: {why}")
    coverage_file, coverage_text = tables.write_coverage(board, result.coverage, result.failed, out)
    if json_out:
        from harness.cli.output import print_json
        from harness.results.csvfile import read_rows as read

        print_json({"folder": str(out), "ranked": [r for w in sweep.worlds(mode) for r in read(out / f"ranked-{w}.csv")],
                    "coverage": read(coverage_file), "not_live": result.not_live,
                    "failed_cells": [{"cell": list(k), "error": e} for k, e in sorted(result.failed.items())]})
    else:
        for world in sweep.worlds(mode):
            print(tables.ranked_text(board, result.rows, world))
        if mode == "both":
            print("\nsim vs live, Spearman's ρ of the ranks per track: " + ", ".join(
                f"{t} {'-' if rho is None else f'{rho:.2f}'}" for t, rho in tables.agreement(board, result.rows).items()))
        print(coverage_text)
    from harness.leaderboard.cells import TIMED_OUT

    for key, error in sorted(result.failed.items()):
        how = "timed out" if error.partition(": ")[2].startswith(TIMED_OUT) else "failed twice"
        print(f"harness: error: cell {'/'.join(map(str, key))} {how}: {error}", file=sys.stderr)
    print(f"\n{len(result.rows)} numbers from {out / 'runs'} in {result.seconds:.0f} s: {out / 'leaderboard.csv'}",
          file=sys.stderr if json_out else sys.stdout)
    if result.played_on:
        print(f"played on {len(result.played_on)} Ray node{'s' * (len(result.played_on) > 1)}: "
              + ", ".join(f"{node} {n} cells" for node, n in sorted(result.played_on.items())),
              file=sys.stderr if json_out else sys.stdout)
    if result.failed:
        raise typer.Exit(1)


@contextmanager
def testbed(ctx: typer.Context, mode: str):
    """(cluster, state folder) of the provisioned testbed, held exclusively, for live cells;
    (None, None) in simulation."""
    if mode == "sim":
        yield None, None
        return
    from harness.spec.testbed_state import default_state_dir
    from harness.testbed.lock import exclusive
    from harness.testbed.open import open_cluster

    state_dir = ctx.find_root().params.get("state_dir") or default_state_dir()[0]
    with exclusive(state_dir):
        yield open_cluster(state_dir), state_dir
