"""harness run: a scenario played live for each policy, with a comparison at the end."""

from __future__ import annotations

import sys

from pathlib import Path
from typing import Optional

import typer

from harness.cli.main import app, warn_app
from harness.cli.options import named


def _render(live):
    from rich.console import Group
    from rich.progress_bar import ProgressBar
    from rich.table import Table

    t = Table.grid(padding=(0, 2))
    p50 = f"{live.p50_ms:.0f}" if live.p50_ms is not None else "-"
    p95 = f"{live.p95_ms:.0f}" if live.p95_ms is not None else "-"
    from rich.markup import escape

    t.add_row(f"[b]{escape(live.policy)}[/b] s{live.seed}", f"{live.elapsed_s:5.0f}/{live.duration_s:.0f}s",
              f"RPS {live.rps:5.1f}", f"p50 {p50} ms", f"p95 {p95} ms", f"requests {live.requests}",
              f"errors {live.errors}", f"pods {live.pods}", f"moves {live.moves}")
    bar = ProgressBar(total=live.duration_s, completed=min(live.elapsed_s, live.duration_s), width=60)
    return Group(t, bar, *live.events)


@app.command()
def run(
    ctx: typer.Context,
    scenario: str = typer.Argument(..., help="A built-in scenario (see 'harness scenarios') or a scenario file."),
    policy: str = typer.Option("reach,default", "--policy", help="Comma-separated policies, run one after another: "
                               "registered names (harness policies) or package.module:Class."),
    app_file: Optional[Path] = typer.Option(None, "--app", callback=named("app"), help="App JSON (default: the scenario's app in workloads/)."),
    profile: Optional[Path] = typer.Option(None, "--profile", callback=named("profile"), help="Profile JSON (default: profiles/<app>.<testbed>.json)."),
    seeds: int = typer.Option(1, "--seeds", min=1, help="How many seeds: runs per policy, the policies taking turns "
                              "within each seed; seed k seeds the load generator."),
    seed: int = typer.Option(0, "--seed", min=0, help="The first seed (--seeds N plays seeds S..S+N-1)."),
    model_dir: Path = typer.Option(Path("models"), "--model-dir", help="Where trained models are: <policy>-<app>.pt, "
                                   "else the newest whose metadata names the policy and app."),
    out: Path = typer.Option(Path("results"), "--out", help="Results folder; each session writes <utc>-<scenario>/ inside."),
    json_out: bool = typer.Option(False, "--json", help="Print every run's summary (summary.json, "
                                  "docs/run-directory.md) as a JSON list instead of the table; progress on stderr."),
    repeat: Optional[int] = typer.Option(None, "--repeat", min=1, hidden=True, help="--seeds, by its old name."),
) -> None:
    """Play a scenario live on the testbed for each policy: deploy the app (placed by the policy,
    or by the placer a rescheduler names: the default scheduler for REACH and RSDQL), drive Locust
    load from the client node(s), inject the scenario's faults, self-heal, autoscale or follow a
    replica schedule or request stream, and let the policy reschedule through the one move loop.
    One run directory per policy and seed (<policy>-s<seed>); every request, event and placement
    is written to it as the run goes; a comparison table across policies is printed at the end.
    Ctrl-C stops the load, recovers the nodes and keeps the results. A scenario of a family's own
    world (world: servicegraph, SIL-GPO's) deploys each policy's decision of its instance as that
    world's servers and plays its users' load, through the same run."""
    from harness.cli.output import console as make_console
    from rich.live import Live

    from harness.cli.options import renamed
    from harness.results.summary import columns, fmt, mean_rows, value
    from harness.scenarios.session import Session, prepare_live, run_session
    from harness.seeds import run_label
    from harness.testbed.open import open_cluster

    state_dir = ctx.obj["state_dir"]
    seeds = renamed(ctx, "seeds", "repeat")
    from harness.testbed.lock import exclusive

    with exclusive(state_dir):
        cluster = open_cluster(state_dir)
        from harness.policies import split_refs

        names = split_refs(policy)
        session = prepare_live(scenario, names, cluster, app_file, profile, model_dir, out)
        if isinstance(session, Session):
            warn_app(session.app, session.app_file)
        console = make_console(stderr=json_out)
        from rich.markup import escape  # a policy's [arguments] are text, not markup

        console.print(escape(f"{session.scenario.name}: {session.scenario.description}; policies {', '.join(names)} "
                             f"× {seeds} seeds from {seed}; results in {session.out}"))

        def done(s: dict) -> None:
            console.print(f"  {escape(run_label(s['policy'], s['seed']))}: mean {fmt(s.get('mean_ms'))} ms, p95 "
                          f"{fmt(s.get('p95_ms'))} ms, {s.get('requests', 0)} requests, {s.get('errors', 0)} errors, "
                          f"{s['moves']} moves, recovery {fmt(s.get('recovery_s'))} s")

        with Live(console=console, refresh_per_second=4, transient=True) as live:
            rows = run_session(cluster, cluster.state, state_dir, session, seeds, seed,
                               on_tick=lambda lv: live.update(_render(lv)), on_done=done)
        from rich.table import Table

        # one column per run (and per policy's mean): fits a terminal however many measures there are
        runs = rows + mean_rows(rows)
        table = Table(title=f"{session.scenario.name}: comparison ({session.out / 'comparison.csv'})")
        table.add_column("")
        for r in runs:
            table.add_column(escape(run_label(r["policy"], r["seed"])), justify="right")
        for c in columns(rows)[2:]:
            table.add_row(c, *(fmt(value(r, c)) for r in runs))
        if json_out:
            from harness.cli.output import print_json

            print_json(rows)
        else:
            console.print(table)
    if not run_problems(rows):
        raise typer.Exit(1)


def run_problems(rows: list[dict]) -> bool:
    """One line per run whose policy failed or timed out (warnings) or whose summary holds an error;
    False when any summary does (the exit status says the results are not whole)."""
    from harness.seeds import run_label

    whole = True
    for r in rows:
        label = run_label(r["policy"], r.get("seed"))
        if r.get("policy_errors") or r.get("plan_timeouts"):
            print(f"harness: warning: {label}: the policy raised {r.get('policy_errors', 0)} times and timed out "
                  f"{r.get('plan_timeouts', 0)} times (events policy-error, plan-timeout in {r['run_dir']}/events.csv)",
                  file=sys.stderr)
        if r.get("kept_up") is False:
            print(f"harness: warning: {label}: the load was not kept up: {r.get('sent')} requests sent "
                  f"({r.get('sent_rps')}/s), {r.get('rps')}/s answered, {r.get('timeouts')} timed out and "
                  f"{r.get('unfinished')} unfinished (latency and timeouts count from the send)", file=sys.stderr)
        for line in r.get("request_log_skipped") or ():
            print(f"harness: warning: {label}: {line}", file=sys.stderr)
        if r.get("error"):
            print(f"harness: error: {label}: {r['error']}", file=sys.stderr)
            whole = False
    return whole
