"""validate, deploy, undeploy."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer

from harness.cli.main import app


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
    from harness.spec.app import load_app

    print("\n".join(describe_app(load_app(app_file))))


@app.command()
def deploy(
    ctx: typer.Context,
    app_file: Path = typer.Argument(..., help="App JSON (μBench workmodel or harness superset)."),
    placement: Optional[Path] = typer.Option(None, "--placement", "-p", help="YAML/JSON: service -> [node, ...], one node per "
                                             "replica. Default: spread over cloud and edge nodes by requested CPU."),
) -> None:
    """Start every replica as a pod on its node, wait until all are ready, publish the endpoints."""
    from harness.spec.app import load_app
    from harness.spec.placement import load_placement, spread_placement
    from harness.testbed.open import open_cluster
    from harness.testbed.pods import deploy as do_deploy

    cluster = open_cluster(ctx.obj["state_dir"])
    a = load_app(app_file)
    names = [n.name for n in cluster.nodes]
    plan = (load_placement(placement, a, names) if placement else
            spread_placement(a, [(n.name, n.tier, n.cpus) for n in cluster.nodes]))
    t = time.monotonic()
    pods = do_deploy(cluster, a, plan)
    for p in pods:
        print(f"{p.name:24s} {p.node:14s} {p.endpoint}")
    print(f"deployed '{a.name}': {len(pods)} pods ready in {time.monotonic() - t:.1f}s; "
          f"gateway {a.gateway} at http://{cluster.endpoints(a.gateway)[0]}/api/v1")


@app.command()
def undeploy(ctx: typer.Context) -> None:
    """Stop every pod of the deployed app (draining in-flight requests)."""
    from harness.testbed.open import open_cluster
    from harness.testbed.pods import undeploy as do_undeploy

    n = do_undeploy(open_cluster(ctx.obj["state_dir"]))
    print(f"stopped {n} pods" if n else "nothing deployed")


@app.command()
def profile(
    ctx: typer.Context,
    app_file: Path = typer.Argument(..., help="App JSON to profile."),
    requests: int = typer.Option(30, min=3, help="Timed requests per service and node type."),
    warmup: int = typer.Option(3, min=0, help="Untimed requests first."),
    out: Path = typer.Option(Path("profiles"), help="Folder for <app>.<testbed>.json and .csv."),
) -> None:
    """Measure every service's execution time on every node type (mean, p50, p95, samples) and the
    RTT matrix; writes profiles/<app>.<testbed>.json and a CSV. The simulator reads the JSON."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from harness.profiling import profile_app, write_profile
    from harness.spec.app import load_app
    from harness.testbed.open import open_cluster

    cluster = open_cluster(ctx.obj["state_dir"])
    a = load_app(app_file)
    types = {n.type for n in cluster.nodes if n.tier != "client"}
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
    print(f"wrote {js} and {cs}")
