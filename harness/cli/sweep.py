"""harness sweep: REACH's Fig. 8 sweep in simulation — policies over pod counts and seeded
background loads, with their optimality gaps."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from harness.cli import options as opt
from harness.cli.main import app
from harness.cli.options import named


@app.command()
def sweep(
    app_file: Optional[Path] = typer.Option(None, "--app", callback=named("app"), show_default=False, help="App JSON; required."),
    profile: Optional[Path] = typer.Option(None, "--profile", callback=named("profile"), show_default=False, help="Profile JSON: the nodes, "
                                           "their RTTs and the services' execution times the simulator is built from; "
                                           "required."),
    testbed: Optional[Path] = typer.Option(None, "--testbed", help="A testbed state file for the nodes and RTTs "
                                           "(default: the profile's)."),
    pods: str = typer.Option("4,12,20", "--pods", help="Comma-separated pod counts (split evenly over the services)."),
    policy: str = typer.Option(opt.SIM_POLICIES, "--policy", help=opt.POLICY_HELP),
    seeds: int = typer.Option(10, "--seeds", min=1, help="How many seeded background loads per pod count, the same "
                              "for every policy: --seed S, S+1, ..."),
    seed: int = typer.Option(0, "--seed", min=0, help=opt.SEED_HELP),
    model_dir: Path = typer.Option(Path("models"), "--model-dir", help="Where trained models are (<policy>-<app>.pt)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Also write the results here as CSV (JSON beside it); "
                                       "'harness report' draws them."),
    gap_time_limit: float = typer.Option(10.0, "--gap-time-limit", help="Seconds HiGHS may take for the optimality "
                                         "gap per seeded scenario (REACH's model as a MILP); 0: no gaps."),
    json_out: bool = typer.Option(False, "--json", help="Print the results (one object per policy and pod count, "
                                  "the CSV's columns) as a JSON list instead of the table; progress on stderr."),
) -> None:
    """REACH's Fig. 8 sweep in simulation: for each pod count, every policy on the same seeded
    background loads — predicted latency, moves, moved-pod share, the final placements' metrics
    (edge ratio, cost per hour, pods left pending) and the optimality gap per policy and size. The
    gap is to the exact optimum where HiGHS proves it within --gap-time-limit on every scenario
    ("opt"); otherwise to the best placement known (the solver's or any policy's) and, in
    brackets, to the proven bound, an upper estimate of the true gap ("bound")."""
    from contextlib import contextmanager
    from dataclasses import asdict

    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from harness.cli.output import console
    from harness.errors import UserError
    from harness.policies import split_refs
    from harness.rescheduler.evaluate import pod_counts, sweep as run_sweep, write_results
    from harness.seeds import seed_list

    table = sys.stderr if json_out else sys.stdout

    def show(name: str, size: int, r) -> None:
        if r is None:
            print(f"{name:15s} {size:4d} {'too large':>11s}", file=table)
            return
        edge = "-" if r.edge_ratio is None else f"{r.edge_ratio:.0%}"
        cost = "-" if r.cost_per_hour is None else f"{r.cost_per_hour:.2f}"
        gap = "-" if r.gap is None else (f"{r.gap:+.1%} opt" if r.gap_reference == "optimum"
                                         else f"{r.gap:+.1%} best known (≤ {r.gap_to_bound:+.1%} bound)")
        print(f"{name:15s} {size:4d} {r.latency_ms:11.2f} {r.moves:6.1f} {r.moved_share:6.0%} {edge:>6s} {cost:>7s} "
              f"{r.rejection_rate:8.0%}  {gap}", file=table)

    @contextmanager
    def gap_bar(size: int, total: int):
        with Progress(TextColumn(f"optimality gap, {size} pods: exact MILP per scenario"), BarColumn(),
                      TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(), console=console(stderr=True),
                      transient=True) as bar:
            task = bar.add_task("gap", total=total)
            yield lambda: bar.advance(task)

    for flag, given in (("--app", app_file), ("--profile", profile)):
        if given is None:
            raise UserError("the sweep needs the app and its profile: --app A.json --profile P.json", field=flag)
    sizes = pod_counts(pods)
    from harness import shipped

    model_dir = shipped.find(model_dir)  # the committed models wherever harness is run from
    print(f"{'policy':15s} {'pods':>4s} {'latency ms':>11s} {'moves':>6s} {'moved':>6s} {'edge':>6s} {'cost/h':>7s} "
          f"{'rejected':>8s}  gap", file=table)
    rows = [asdict(r) for r in run_sweep(app_file, profile, testbed, sizes, split_refs(policy), seed_list(seeds, seed),
                                         model_dir, gap_time_limit, show, gap_bar)]
    if out:
        write_results(rows, out)
        print(f"wrote {out} and {out.with_suffix('.json')}", file=table)
    if json_out:
        from harness.cli.output import print_json

        print_json(rows)
