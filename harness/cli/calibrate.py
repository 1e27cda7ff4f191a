"""harness calibrate: measure a few placements live and write a profile the simulator fits the testbed with."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from harness.cli.main import app, warn_app
from harness.cli.options import OldPositional, named


@app.command(cls=OldPositional)
def calibrate(
    ctx: typer.Context,
    app_option: Optional[Path] = typer.Option(None, "--app", callback=named("app"), show_default=False, help="App JSON (μBench workmodel "
                                              "or harness superset); required."),
    app_file: Optional[Path] = typer.Argument(None, hidden=True, help="The app, as old scripts give it."),
    profile: Optional[Path] = typer.Option(None, "--profile", callback=named("profile"), help="The profile to calibrate (default: "
                                           "profiles/<app>.<testbed>.json)."),
    seconds: float = typer.Option(30.0, "--seconds", min=5, help="Measured seconds per placement (after a 5 s warm-up)."),
    rounds: int = typer.Option(1, "--rounds", min=1, help="Rounds over the placements (they take turns; round k "
                               "seeds the load with k)."),
    out: Path = typer.Option(Path("profiles"), "--out", help="Folder for <app>.<testbed>.calibrated.json."),
    results: Path = typer.Option(Path("results"), "--results", help="Where the measured runs are kept "
                                 "(<utc>-calibrate-<app>/)."),
    repeat: Optional[int] = typer.Option(None, "--repeat", min=1, hidden=True, help="--rounds, by its old name."),
) -> None:
    """Fit the simulator to this testbed as it is now. Deploys the app on one node type at a
    time and split between cloud and edge, measures each placement under one closed-loop user
    (the placements take turns), and fits what REACH's model lacks: each service's execution
    time as the cells measure it live, an overhead per call and one on the user's request.
    First times each service's pod start and stop on every node type and each link's RTT spread
    (what the simulator draws pod lifecycles and network jitter from).
    Writes profiles/<app>.<testbed>.calibrated.json (the profile, with 'calibration' saying how);
    give it to run, train, evaluate or predict with --profile. The original profile is kept."""
    import time

    from harness.cli.output import console as make_console
    from rich.live import Live
    from rich.table import Table

    from harness.cli.options import app_file as the_app, renamed
    from harness.scenarios import calibration
    from harness.cli.run import _render
    from harness.results.collect import find
    from harness.scenarios.session import check_writable, find_profile
    from harness.spec.app import load_app
    from harness.spec.profile import load_profile
    from harness.testbed.lock import exclusive
    from harness.testbed.open import open_cluster

    state_dir = ctx.obj["state_dir"]
    app_file = the_app(app_option, app_file)
    rounds = renamed(ctx, "rounds", "repeat")
    spec = load_app(app_file)
    warn_app(spec, app_file)
    check_writable(out)
    check_writable(results)
    with exclusive(state_dir):
        cluster = open_cluster(state_dir)
        state = cluster.state
        profile_file = find_profile(spec, state.name, profile)
        prof = load_profile(profile_file)
        placements = calibration.placements_to_measure(spec, state)
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        where = results / f"{stamp}-calibrate-{spec.name}"
        console = make_console()
        console.print(f"calibrating {spec.name} on {state.name}: {len(placements)} placements "
                      f"({', '.join(placements)}) × {rounds} rounds, {seconds:g} s each; runs in {where}")
        console.print("timing each service's pod start and stop on every node type, and each link's RTT spread")
        pod_life, spread = calibration.pods_and_links(cluster, spec, where)
        with Live(console=console, refresh_per_second=4, transient=True) as live:
            rows = calibration.measure(cluster, state, state_dir, spec, app_file, prof, profile_file, placements,
                                       seconds, where, rounds=rounds, on_tick=lambda lv: live.update(_render(lv)))
    collected = find([where])
    result = calibration.fit(spec, prof, state, collected.runs)
    host = [x for r in rows for x in r.get("host_reference_ms", [])]
    calibrated = calibration.calibrated_profile(prof, result, host, placements, seconds, str(profile_file),
                                                lifecycle=pod_life, rtt_sd_ms=spread)
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{spec.name}.{state.name}.calibrated.json"
    tmp = target.with_suffix(".json.tmp")
    tmp.write_text(calibrated.model_dump_json(indent=1))
    tmp.replace(target)
    table = Table(title=f"call overhead {result.call_overhead_ms:.2f} ms, gateway overhead "
                        f"{result.gateway_overhead_ms:.2f} ms")
    for c in ("placement", "measured ms", "profile's model", "calibrated model"):
        table.add_column(c, justify="right" if c != "placement" else "left")
    for r in result.residuals:
        table.add_row(r["placement"], f"{r['measured_ms']:.1f}", f"{r['before_ms']:.1f} ({_err(r['before_ms'], r['measured_ms'])})",
                      f"{r['after_ms']:.1f} ({_err(r['after_ms'], r['measured_ms'])})")
    console.print(table)
    console.print(f"wrote {target}")


def _err(predicted: float, measured: float) -> str:
    return f"{100 * (predicted - measured) / measured:+.1f} %"
