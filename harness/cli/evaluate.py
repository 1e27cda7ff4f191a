"""harness evaluate: policies compared in simulation on the same seeded scenarios (REACH Fig. 8)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from harness.cli.main import app


@app.command()
def evaluate(
    app_file: Path = typer.Option(..., "--app", help="App JSON."),
    profile: Path = typer.Option(..., "--profile", help="Profile JSON."),
    testbed: Optional[Path] = typer.Option(None, "--testbed"),
    policies: str = typer.Option("reach,rsdql,default,cloud-first,latency-greedy,rollout,optimal",
                                 help="Comma-separated policies: registered names (harness train makes the learned "
                                 "ones' models) or package.module:Class."),
    pods: str = typer.Option("4,12,20", help="Comma-separated pod counts (split evenly over the services)."),
    scenarios: int = typer.Option(10, help="Scenarios (seeded background loads) per pod count."),
    model_dir: Path = typer.Option(Path("models"), help="Where trained models are (<policy>-<app>.pt)."),
    out: Optional[Path] = typer.Option(None, help="Also write the results here as CSV (JSON beside it)."),
    gap_time_limit: float = typer.Option(10.0, help="Seconds HiGHS may take per scenario for the optimality gap "
                                         "(REACH's model as a MILP); 0: no gaps."),
) -> None:
    """Predicted latency, moves, moved-pod share, the final placements' metrics (edge ratio, cost
    per hour, pods left pending) and the optimality gap per policy and size, in simulation (REACH
    Fig. 8). The gap is to the exact optimum where HiGHS proves it within --gap-time-limit on every
    scenario ("opt"); otherwise to the best placement known (the solver's or any policy's) and, in
    brackets, to the proven bound, an upper estimate of the true gap ("bound")."""
    from dataclasses import asdict

    from harness.errors import UserError
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
    built = {}
    for ref in (p.strip() for p in policies.split(",") if p.strip()):
        policy = build_for_app(ref, a.name, app_file, profile, model_dir)
        built[policy.name] = policy
    names = list(built)
    rows = []
    print(f"{'policy':15s} {'pods':>4s} {'latency ms':>11s} {'moves':>6s} {'moved':>6s} {'edge':>6s} {'cost/h':>7s} "
          f"{'rejected':>8s}  gap")
    seeds = list(range(scenarios))
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
