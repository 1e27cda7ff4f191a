"""harness deploy / undeploy: start every replica as a pod, or stop them all."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer

from harness.cli.main import app, warn_app
from harness.cli.options import OldPositional, named


@app.command(cls=OldPositional)
def deploy(
    ctx: typer.Context,
    app_option: Optional[Path] = typer.Option(None, "--app", callback=named("app"), show_default=False, help="App JSON (μBench workmodel "
                                              "or harness superset); required."),
    app_file: Optional[Path] = typer.Argument(None, hidden=True, help="The app, as old scripts give it."),
    placement: Optional[Path] = typer.Option(None, "--placement", "-p", help="YAML/JSON: service -> [node, ...], one node per "
                                             "replica. Default: spread over cloud and edge nodes by requested CPU."),
) -> None:
    """Start every replica as a pod on its node, wait until all are ready, publish the endpoints."""
    from harness.cli.options import app_file as the_app
    from harness.spec.app import load_app
    from harness.spec.placement import load_placement, spread_placement
    from harness.testbed.open import open_cluster
    from harness.testbed.pods import deploy as do_deploy
    from harness.testbed.lock import exclusive

    app_file = the_app(app_option, app_file)
    with exclusive(ctx.obj["state_dir"]):
        cluster = open_cluster(ctx.obj["state_dir"])
        a = load_app(app_file)
        warn_app(a, app_file)
        names = [n.name for n in cluster.nodes]
        a.check_nodes([n.name for n in cluster.nodes if n.role != "client"], str(app_file))
        plan = (load_placement(placement, a, names) if placement else
                spread_placement(a, [(n.name, n.role, n.cpus) for n in cluster.nodes]))
        t = time.monotonic()
        pods = do_deploy(cluster, a, plan)
        for p in pods:
            print(f"{p.name:24s} {p.node:14s} {p.endpoint}")
        print(f"deployed '{a.name}': {len(pods)} pods ready in {time.monotonic() - t:.1f}s; "
              f"gateway {a.gateway} at http://{cluster.endpoints(a.gateway)[0]}/api/v1")


@app.command()
def undeploy(ctx: typer.Context) -> None:
    """Stop every pod of the deployed app (draining in-flight requests), every process a killed run
    left on the nodes (its cells and load generator), and bring back the nodes it left failed."""
    from harness.testbed.open import open_cluster
    from harness.testbed.pods import undeploy as do_undeploy
    from harness.testbed.lock import exclusive

    with exclusive(ctx.obj["state_dir"]):
        cluster = open_cluster(ctx.obj["state_dir"])
        n = do_undeploy(cluster)
        strays = cluster.stop_strays()  # a killed run's cells and load generator, which no record names
        print(f"stopped {n} pods" if n else "nothing deployed")
        if strays:
            print(f"stopped {strays} stray processes left on the nodes by a run that was killed")
        down = [n.name for n in cluster.nodes if not cluster.node_up(n.name)]
        for name in down:  # a node failure whose run was killed before it could undo it
            cluster.recover_node(name)
        if down:
            print(f"brought back {len(down)} nodes left down by a run that was killed: {', '.join(down)}")
