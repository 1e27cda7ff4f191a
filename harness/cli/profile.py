"""harness profile: each service's execution time on each node type."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from harness.cli.main import app
from harness.cli.options import OldPositional, named


@app.command(cls=OldPositional)
def profile(
    ctx: typer.Context,
    app_option: Optional[Path] = typer.Option(None, "--app", callback=named("app"), show_default=False, help="App JSON to profile; required."),
    app_file: Optional[Path] = typer.Argument(None, hidden=True, help="The app, as old scripts give it."),
    requests: int = typer.Option(30, min=3, help="Timed requests per service and node type."),
    warmup: int = typer.Option(3, min=0, help="Untimed requests first."),
    out: Path = typer.Option(Path("profiles"), help="Folder for <app>.<testbed>.json and .csv."),
) -> None:
    """Measure every service's execution time on every node type (mean, p50, p95, samples), each
    node type's pod start and stop times, the RTT matrix and each link's RTT spread; writes
    profiles/<app>.<testbed>.json and a CSV. The simulator reads the JSON."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from harness.cli.options import app_file as the_app
    from harness.profiling import profile_app, write_profile
    from harness.spec.app import load_app
    from harness.testbed.open import open_cluster
    from harness.testbed.lock import exclusive

    app_file = the_app(app_option, app_file)
    with exclusive(ctx.obj["state_dir"]):
        cluster = open_cluster(ctx.obj["state_dir"])
        a = load_app(app_file)
        types = {n.type for n in cluster.nodes if n.role != "client"}
        with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                      TimeElapsedColumn(), transient=True) as bar:
            task = bar.add_task("profiling", total=len(a.services))
            started = []

            def step(service: str) -> None:
                if started:
                    bar.advance(task)
                started.append(1)
                bar.update(task, description=f"{service} on {', '.join(sorted(types))}")
            prof = profile_app(cluster, a, cluster.state.name, requests=requests, warmup=warmup, on_step=step)
            bar.advance(task)
        js, cs = write_profile(prof, out)
        width = max(len(s) for s in prof.services)
        print(f"{'service':{width}s} " + " ".join(f"{t:>14s}" for t in sorted(types)))
        for s, per in prof.services.items():
            print(f"{s:{width}s} " + " ".join(f"{per[t].mean_ms:11.2f} ms" for t in sorted(types)))
        if prof.lifecycle:
            print("pod start to ready / stop to gone: " + ", ".join(
                f"{t} {v.ready_s:.2f} / {v.gone_s:.2f} s" for t, v in prof.lifecycle.items()))
        spread = [v for a, row in prof.rtt_sd_ms.items() for b, v in row.items() if a != b and v is not None]
        if spread:
            print(f"RTT spread (standard deviation) per link: {min(spread):.2f} to {max(spread):.2f} ms")
        print(f"wrote {js} and {cs}")
