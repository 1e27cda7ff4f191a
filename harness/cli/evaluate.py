"""harness evaluate: a scenario played in simulation, policies compared (the same run directories
as `harness run`). REACH's Fig. 8 sweep is `harness sweep`."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from harness.cli import options as opt
from harness.cli.main import app
from harness.cli.options import named


@app.command()
def evaluate(
    ctx: typer.Context,
    scenario: Optional[str] = typer.Argument(None, show_default=False, help="A built-in scenario (see 'harness "
                                             "scenarios') or a scenario file, played in simulation."),
    app_file: Optional[Path] = typer.Option(None, "--app", callback=named("app"), help="App JSON (default: the scenario's app)."),
    profile: Optional[Path] = typer.Option(None, "--profile", callback=named("profile"), help="Profile JSON (default: "
                                           "profiles/<app>.<testbed>.json)."),
    inventory: Optional[Path] = typer.Option(None, "--inventory", "-i", callback=named("inventory"), help="The testbed to simulate (default: "
                                             "REACH's, harness/data/inventories/reach-local.yaml)."),
    policy: str = typer.Option(opt.SIM_POLICIES, "--policy", help=opt.POLICY_HELP),
    seeds: int = typer.Option(3, "--seeds", min=1, help=opt.SEEDS_HELP),
    seed: int = typer.Option(0, "--seed", min=0, help=opt.SEED_HELP),
    model_dir: Path = typer.Option(Path("models"), help="Where trained models are (<policy>-<app>.pt)."),
    out: Path = typer.Option(Path("results"), help="The results folder (<utc>-<scenario>-sim/ inside)."),
    gap_time_limit: float = typer.Option(10.0, help="Seconds HiGHS may take for the optimality gap of a scenario "
                                         "whose app has sources (paper 003's MILP); 0: no gaps."),
    json_out: bool = typer.Option(False, "--json", help="Print every run's summary (summary.json, "
                                  "docs/run-directory.md) as a JSON list instead of the table; progress on stderr."),
    terminating_s: float = typer.Option(0.0, "--terminating-s", min=0, help="How long a pod stopped (scaled down, "
                                        "or a move's old copy) still holds its node's room, as Kubernetes' graceful "
                                        "deletion does (about 2 s for a process that exits on SIGTERM; 0: the profile's "
                                        "measured stop time per node type, at once without one)."),
    variability: str = typer.Option("drawn", "--variability",
                                    help="drawn: each request draws its job times, route and RTTs and each pod its "
                                    "start and stop times, from the profile's measured spreads; means: every request "
                                    "at its placement's mean and pods at once (the simulator before it predicted "
                                    "tails: the seeds of a closed loop are then one run)."),
    policies: Optional[str] = typer.Option(None, "--policies", hidden=True, help="--policy, by its old name."),
    # the sweep's options, from when evaluate without a scenario was the sweep: refused with where it went
    pods: Optional[str] = typer.Option(None, "--pods", hidden=True),
    testbed: Optional[Path] = typer.Option(None, "--testbed", hidden=True),
    scenarios: Optional[int] = typer.Option(None, "--scenarios", hidden=True),
) -> None:
    """Policies compared in simulation: a scenario played on a simulated cluster.

    The scenario played on a simulated cluster built from the inventory and the profile, for each
    seed and policy, through the same run as live (deployment, load, faults and self-healing,
    autoscaling, replica schedules, request streams, the one move loop): one run directory per
    policy and seed (<policy>-s<seed>) under --out with the same files and summary as `harness
    run`, every request's latency predicted (queueing-aware where the load is known), and what the
    simulation assumes in each summary. `harness report` takes them beside live runs.

    REACH's Fig. 8 sweep over seeded background loads (--app, --profile, --pods) is `harness sweep`."""
    from harness.errors import UserError

    sweep_options = [name for name, given in (("--pods", pods), ("--testbed", testbed), ("--scenarios", scenarios))
                     if given is not None]
    if sweep_options:
        raise UserError("an option of the sweep: REACH's Fig. 8 sweep is its own command now, harness "
                        "sweep --app A.json --profile P.json [--pods 4,12,20]", field=sweep_options[0])
    if scenario is None:
        raise UserError("give a SCENARIO to play in simulation (REACH's Fig. 8 sweep, which evaluate ran without "
                        "one, is its own command now: harness sweep --app A.json --profile P.json)", field="SCENARIO")
    if variability not in ("drawn", "means"):
        raise UserError(f"--variability is drawn or means, not {variability!r}", field="--variability")
    names = opt.renamed(ctx, "policy", "policies")
    _evaluate_scenario(scenario, names, seeds, seed, inventory, app_file, profile, model_dir, out, terminating_s,
                       json_out, gap_time_limit, variability)


def _evaluate_scenario(scenario: str, policies: str, seeds: int, first_seed: int, inventory: Optional[Path],
                       app_file: Optional[Path], profile: Optional[Path], model_dir: Path, out: Path,
                       terminating_s: float = 0.0, json_out: bool = False, gap_time_limit: float = 0.0,
                       variability: str = "drawn") -> None:
    from harness.cli.output import console as make_console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from harness.results.summary import fmt
    from harness.scenarios.session import prepare, run_simulated
    from harness.seeds import run_label
    from harness.spec.inventory import load_inventory
    from harness.testbed.simulated import simulated_state

    from harness import shipped

    state = simulated_state(load_inventory(inventory))
    model_dir = shipped.find(model_dir)  # the committed models wherever harness is run from
    from harness.policies import split_refs

    names = split_refs(policies)
    session = prepare(scenario, names, state, app_file, profile, model_dir, out, suffix="-sim")
    console = make_console(stderr=json_out)
    console.print(f"{session.scenario.name} in simulation on {state.name}: {session.scenario.description}; "
                  f"policies {', '.join(session.policies)} × {seeds} seeds from {first_seed}; results in "
                  f"{session.out}")
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total} runs"),
                  TimeElapsedColumn(), console=console, transient=True) as bar:
        task = bar.add_task("simulated runs", total=seeds * len(session.policies))

        def done(s: dict) -> None:
            bar.advance(task)
            console.print(f"  {run_label(s['policy'], s['seed'])}: mean {fmt(s.get('mean_ms'))} ms, p95 "
                          f"{fmt(s.get('p95_ms'))} ms, {s.get('requests', 0)} requests, {s.get('errors', 0)} errors, {s['moves']} moves")
        rows = run_simulated(state, session, seeds, first_seed, on_done=done, terminating_s=terminating_s,
                             gap_time_limit_s=gap_time_limit, variability=variability)
    if json_out:
        from harness.cli.output import print_json

        print_json(rows)
    else:
        _print_comparison(console, rows, session)
    from harness.cli.run import run_problems

    if not run_problems(rows):
        raise typer.Exit(1)


def _print_comparison(console, rows: list[dict], session) -> None:
    """Per policy, over its seeds: mean and p95 latency with their 95 % intervals (Student's t over
    seeds), then the means of the other measures; plain lines, so a pipe keeps every number."""
    from harness.results.stats import mean_ci95
    from harness.results.summary import ADMISSION_COLUMNS, fmt, had_requests, value

    def ci(vals: list) -> str:
        vals = [v for v in vals if isinstance(v, (int, float))]
        if not vals:
            return "-"
        m, half = mean_ci95(vals)
        return f"{m:.1f}" + ("" if half is None else f" ± {half:.1f}")

    cols = ("errors", "moves", "recovery_s", "edge_ratio", "cost", "rejection_rate")
    if any(value(r, "cost_delay_objective") is not None for r in rows):  # paper 003's problem
        cols += ("cost_delay_objective", "cost_delay_gap")
    if had_requests(rows):
        cols += ADMISSION_COLUMNS
    print(f"\n{session.scenario.name} in simulation, over seeds ({session.out / 'comparison.csv'}):")
    width = max([16] + [len(r["policy"]) + 1 for r in rows])
    print(f"{'policy':{width}s} {'seeds':>5s} {'mean ms':>16s} {'p95 ms':>16s} " + " ".join(f"{c:>{max(14, len(c))}s}" for c in cols))
    for policy in dict.fromkeys(r["policy"] for r in rows):
        mine = [r for r in rows if r["policy"] == policy]
        means = []
        for c in cols:
            vals = [value(r, c) for r in mine if isinstance(value(r, c), (int, float))]
            means.append(fmt(sum(vals) / len(vals)) if vals else "-")
        print(f"{policy:{width}s} {len(mine):5d} {ci([r.get('mean_ms') for r in mine]):>16s} "
              f"{ci([r.get('p95_ms') for r in mine]):>16s} " + " ".join(f"{m:>{max(14, len(c))}s}" for m, c in zip(means, cols)))
