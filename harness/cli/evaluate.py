"""harness evaluate: policies compared in simulation — a scenario file played in simulation (the
same run directories as `harness run`), or REACH's Fig. 8 sweep over seeded background loads."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from harness.cli.main import app


@app.command()
def evaluate(
    scenario: Optional[str] = typer.Argument(None, help="A built-in scenario (see 'harness scenarios') or a scenario "
                                             "file, played in simulation; without it, REACH's Fig. 8 sweep (--app, "
                                             "--profile, --pods)."),
    app_file: Optional[Path] = typer.Option(None, "--app", help="App JSON (with a scenario: default its app)."),
    profile: Optional[Path] = typer.Option(None, "--profile", help="Profile JSON (with a scenario: default "
                                           "profiles/<app>.<testbed>.json)."),
    testbed: Optional[Path] = typer.Option(None, "--testbed", help="A testbed state file for the sweep's nodes and RTTs."),
    inventory: Optional[Path] = typer.Option(None, "--inventory", "-i", help="With a scenario: the testbed to "
                                             "simulate (default: REACH's, harness/data/inventories/reach-local.yaml)."),
    policies: str = typer.Option("reach,rsdql,default,cloud-first,latency-greedy,rollout,optimal", "--policy",
                                 "--policies", help="Comma-separated policies: registered names (harness train makes "
                                 "the learned ones' models) or package.module:Class."),
    seeds: Optional[int] = typer.Option(None, "--seeds", min=1, help="Seeds 0..N-1, the same for every policy: with a "
                                        "scenario, runs per policy (default 3); the sweep, its seeded background "
                                        "loads per pod count (default 10)."),
    pods: str = typer.Option("4,12,20", help="Comma-separated pod counts (split evenly over the services)."),
    scenarios: Optional[int] = typer.Option(None, "--scenarios", hidden=True, help="The sweep's --seeds, by its old name."),
    model_dir: Path = typer.Option(Path("models"), help="Where trained models are (<policy>-<app>.pt)."),
    out: Optional[Path] = typer.Option(None, help="The sweep: also write the results here as CSV (JSON beside it). A "
                                       "scenario: the results folder (default results/; <utc>-<scenario>-sim/ inside)."),
    gap_time_limit: float = typer.Option(10.0, help="Seconds HiGHS may take for the optimality gap: per seeded "
                                         "scenario of the sweep (REACH's model as a MILP), or once for a scenario "
                                         "whose app has sources (paper 003's MILP); 0: no gaps."),
    json_out: bool = typer.Option(False, "--json", help="With a scenario: print every run's summary (summary.json, "
                                  "docs/run-directory.md) as a JSON list instead of the table; progress on stderr."),
    terminating_s: float = typer.Option(0.0, "--terminating-s", min=0, help="With a scenario: how long a pod "
                                        "stopped (scaled down, or a move's old copy) still holds its node's room, as "
                                        "Kubernetes' graceful deletion does (about 2 s for a process that exits on "
                                        "SIGTERM; 0: at once, near the local testbed's cells)."),
) -> None:
    """Policies compared in simulation.

    With a SCENARIO: the scenario played on a simulated cluster built from the inventory and the
    profile, for each policy and seed, through the same run as live (deployment, load, faults and
    self-healing, autoscaling, replica schedules, request streams, the one move loop): one run
    directory per policy and seed under --out with the same files and summary as `harness run`,
    every request's latency predicted (queueing-aware where the load is known), and what the
    simulation assumes in each summary. `harness report` takes them beside live runs.

    Without: REACH's Fig. 8 sweep — predicted latency, moves, moved-pod share, the final
    placements' metrics (edge ratio, cost per hour, pods left pending) and the optimality gap per
    policy and size. The gap is to the exact optimum where HiGHS proves it within
    --gap-time-limit on every scenario ("opt"); otherwise to the best placement known (the
    solver's or any policy's) and, in brackets, to the proven bound, an upper estimate of the true
    gap ("bound")."""
    if scenario is not None:
        return _evaluate_scenario(scenario, policies, seeds or 3, inventory, app_file, profile, model_dir,
                                  out or Path("results"), terminating_s, json_out, gap_time_limit)
    from dataclasses import asdict

    from harness.errors import UserError

    if app_file is None or profile is None:
        raise UserError("give a SCENARIO to play in simulation, or --app and --profile for the Fig. 8 sweep",
                        field="--app" if app_file is None else "--profile")
    from harness.policies import build_for_app
    from harness.rescheduler.evaluate import run_policy, write_results
    from harness.rescheduler.gaps import gaps
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
    from harness.sim.ceenv import EnvConfig, load_dynamics

    try:
        sizes = [int(x) for x in pods.split(",")]
    except ValueError:
        raise UserError("--pods takes comma-separated whole numbers", field="--pods") from None
    a, _, dyn = load_dynamics(app_file, profile, testbed)
    if any(n % dyn.S or n < dyn.S for n in sizes):
        raise UserError(f"pod counts must be multiples of the {dyn.S} services (one count of replicas for each)",
                        field="--pods")
    per_service = max(sizes) // dyn.S
    if per_service > dyn.cfg.max_replicas:  # more replicas than CEEnv's default slots: the slots follow
        a, _, dyn = load_dynamics(app_file, profile, testbed, EnvConfig(max_replicas=per_service))
    from harness.policies import label, split_refs

    built = {}
    for ref in split_refs(policies):
        policy = build_for_app(ref, a.name, app_file, profile, model_dir)
        built[label(ref, policy)] = policy
    names = list(built)
    rows = []
    print(f"{'policy':15s} {'pods':>4s} {'latency ms':>11s} {'moves':>6s} {'moved':>6s} {'edge':>6s} {'cost/h':>7s} "
          f"{'rejected':>8s}  gap")
    seeds = list(range(seeds or scenarios or 10))
    for size in sizes:
        done, finals = {}, {}
        for n in names:
            finals[n] = []
            r = run_policy(dyn, built[n], n, size, seeds, finals=finals[n])
            if r is None:
                print(f"{n:15s} {size:4d} {'too large':>11s}")
                del finals[n]
                continue
            done[n] = r
        if gap_time_limit > 0 and finals:
            with Progress(TextColumn(f"optimality gap, {size} pods: exact MILP per scenario"), BarColumn(),
                          TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(), transient=True) as bar:
                task = bar.add_task("gap", total=len(seeds))
                found = gaps(dyn, size, seeds, finals, gap_time_limit, lambda: bar.advance(task))
            for n, g in found.items():
                done[n].gap, done[n].gap_to_bound, done[n].gap_reference = g.gap, g.gap_to_bound, g.reference
        for n, r in done.items():
            rows.append(r)
            edge = "-" if r.edge_ratio is None else f"{r.edge_ratio:.0%}"
            cost = "-" if r.cost_per_hour is None else f"{r.cost_per_hour:.2f}"
            gap = "-" if r.gap is None else (f"{r.gap:+.1%} opt" if r.gap_reference == "optimum"
                                             else f"{r.gap:+.1%} best known (≤ {r.gap_to_bound:+.1%} bound)")
            print(f"{n:15s} {size:4d} {r.latency_ms:11.2f} {r.moves:6.1f} {r.moved_share:6.0%} {edge:>6s} {cost:>7s} "
                  f"{r.rejection_rate:8.0%}  {gap}")
    if out:
        write_results([asdict(r) for r in rows], out)
        print(f"wrote {out} and {out.with_suffix('.json')}")


def _evaluate_scenario(scenario: str, policies: str, seeds: int, inventory: Optional[Path], app_file: Optional[Path],
                       profile: Optional[Path], model_dir: Path, out: Path, terminating_s: float = 0.0,
                       json_out: bool = False, gap_time_limit: float = 0.0) -> None:
    from harness.cli.output import console as make_console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from harness.results.summary import fmt
    from harness.scenarios.session import prepare, run_simulated
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
                  f"policies {', '.join(session.policies)} × {seeds} seeds; results in {session.out}")
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total} runs"),
                  TimeElapsedColumn(), console=console, transient=True) as bar:
        task = bar.add_task("simulated runs", total=seeds * len(session.policies))

        def done(s: dict) -> None:
            bar.advance(task)
            console.print(f"  {s['policy']} s{s['seed']}: mean {fmt(s.get('mean_ms'))} ms, p95 {fmt(s.get('p95_ms'))} "
                          f"ms, {s.get('requests', 0)} requests, {s.get('errors', 0)} errors, {s['moves']} moves")
        rows = run_simulated(state, session, seeds, on_done=done, terminating_s=terminating_s,
                             gap_time_limit_s=gap_time_limit)
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
