"""harness provision: stand up the testbed the inventory describes."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer

from harness.cli.main import app
from harness.cli.options import named


def _state_dir(ctx: typer.Context) -> Path:
    return ctx.obj["state_dir"]


@app.command()
def provision(
    ctx: typer.Context,
    inventory: Optional[Path] = typer.Option(
        None, "--inventory", "-i", callback=named("inventory"), help="Inventory YAML (node types, nodes, tier RTTs). Default: REACH's testbed "
        "(2 Cloud-A, 2 Edge-A, 2 Edge-B, 1 Client-A; cloud-edge 50 ms)."),
    measure: bool = typer.Option(True, help="Measure the node-to-node RTT matrix after building."),
) -> None:
    """Stand up the testbed. Backend local (default): one network namespace per node with a
    CPU/memory-capped cgroup, inter-node latency by tc netem (or an NFQUEUE delayer where the
    kernel lacks netem), by playbooks/local.yml. Backend k3s (inventories/openstack.yml or
    inventories/ssh-hosts.yml): OpenStack VMs or your SSH hosts, K3s, the cell image, tc netem and
    Prometheus, by openstack.yml, k3s.yml, cell-image.yml, netem.yml and monitoring.yml
    (docs/real-testbed.md).

    Runs the playbooks through ansible-runner with live progress. Safe to re-run.
    """
    from harness.cli.output import console as make_console
    from rich.live import Live
    from rich.text import Text

    from harness.spec.inventory import load_inventory
    from harness.testbed.backends import backend

    inv = load_inventory(inventory)
    do_provision = backend(inv.backend, str(inventory or "default inventory")).provision
    console = make_console(stderr=True)
    start = time.monotonic()

    def line(p) -> Text:
        c = p.counts
        item = f" [{p.item}]" if p.item else ""
        return Text(f"⏳ {p.task}{item}  ok={c['ok']} changed={c['changed']} failed={c['failed']}  "
                    f"{time.monotonic() - start:4.1f}s")

    from harness.provision.runner import Progress

    from harness.testbed.lock import exclusive

    with exclusive(_state_dir(ctx)), Live(line(Progress(task="starting ansible-runner")), console=console,
                                          transient=True, refresh_per_second=8) as live:
        state, result = do_provision(inv, _state_dir(ctx), on_progress=lambda p: live.update(line(p)), measure=measure)
    from harness.spec.testbed_state import remember_state_dir

    remember_state_dir(_state_dir(ctx))  # commands run from another folder find this testbed
    c = result.counts
    console.print(f"provisioned '{state.name}' ({len(state.nodes)} nodes, latency by {state.latency_injector}: "
                  f"{state.latency_injector_reason}) in {time.monotonic() - start:.1f}s — "
                  f"ok={c['ok']} changed={c['changed']}")
    from harness.cli.status import print_status

    print_status(ctx, json_out=False, measure=False)
