"""provision, status, teardown."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Optional

import typer

from harness.cli.main import app


def _state_dir(ctx: typer.Context) -> Path:
    return ctx.obj["state_dir"]


@app.command()
def provision(
    ctx: typer.Context,
    inventory: Optional[Path] = typer.Option(
        None, "--inventory", "-i", help="Inventory YAML (node types, nodes, tier RTTs). Default: REACH's testbed "
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
    from rich.console import Console
    from rich.live import Live
    from rich.text import Text

    from harness.spec.inventory import load_inventory
    inv = load_inventory(inventory)
    if inv.backend == "k3s":
        from harness.testbed.kube.provision import provision as kube_provision

        def do_provision(inv, state_dir, on_progress, measure):  # the RTT is always measured there
            return kube_provision(inv, state_dir, on_progress)
    else:
        from harness.testbed.local.provision import provision as do_provision
    console = Console(stderr=True)
    start = time.monotonic()

    def line(p) -> Text:
        c = p.counts
        item = f" [{p.item}]" if p.item else ""
        return Text(f"⏳ {p.task}{item}  ok={c['ok']} changed={c['changed']} failed={c['failed']}  "
                    f"{time.monotonic() - start:4.1f}s")

    from harness.provision.runner import Progress

    with Live(line(Progress(task="starting ansible-runner")), console=console, transient=True,
              refresh_per_second=8) as live:
        state, result = do_provision(inv, _state_dir(ctx), on_progress=lambda p: live.update(line(p)), measure=measure)
    c = result.counts
    console.print(f"provisioned '{state.name}' ({len(state.nodes)} nodes, latency by {state.latency_injector}: "
                  f"{state.latency_injector_reason}) in {time.monotonic() - start:.1f}s — "
                  f"ok={c['ok']} changed={c['changed']}")
    _print_status(ctx, json_out=False, measure=False)


def _print_status(ctx: typer.Context, json_out: bool, measure: bool) -> None:
    from rich.console import Console
    from rich.table import Table

    from harness.spec.testbed_state import save_state
    from harness.testbed.open import open_cluster

    cluster = open_cluster(_state_dir(ctx))
    state = cluster.state
    if measure:
        state.rtt_measured_ms = cluster.measure_rtt()
        save_state(_state_dir(ctx), state)
    up = {n.name: cluster.node_up(n.name) for n in state.nodes}
    if json_out:
        doc = state.model_dump(mode="json", exclude={"inventory", "backend_data"})
        for n in doc["nodes"]:
            n["up"] = up[n["name"]]
        print(json.dumps(doc, indent=2))
        return
    console = Console()
    t = Table(title=f"testbed '{state.name}' ({state.backend}, latency by {state.latency_injector})")
    for col in ("node", "type", "tier", "address", "cores", "mem GiB", "speed", "state"):
        t.add_column(col, no_wrap=True)
    for n in state.nodes:
        t.add_row(n.name, n.type, n.tier, n.address, f"{n.cpus:g}", f"{n.memory_gb:g}", f"{n.speed:g}",
                  "[green]up[/]" if up[n.name] else "[red]down[/]")
    console.print(t)
    # One row per pair: narrow enough for any terminal, and easy to grep.
    m = Table(title="round-trip time between nodes (ms)")
    for col in ("node a", "node b", "configured", "measured"):
        m.add_column(col, no_wrap=True, justify="left" if col.startswith("node") else "right")
    names = [n.name for n in state.nodes]
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            meas = state.rtt_measured_ms.get(a, {}).get(b)
            m.add_row(a, b, f"{state.rtt_configured_ms[a][b]:g}", "unreachable" if meas is None and state.rtt_measured_ms else
                      ("-" if meas is None else f"{meas:.2f}"))
    console.print(m)


@app.command()
def status(
    ctx: typer.Context,
    json_out: bool = typer.Option(False, "--json", help="Print machine-readable JSON."),
    measure: bool = typer.Option(False, "--measure", help="Measure the RTT matrix again now (a few seconds)."),
) -> None:
    """Nodes (type, tier, address, cores, memory, up/down) and measured vs configured RTT."""
    _print_status(ctx, json_out, measure)


@app.command()
def teardown(
    ctx: typer.Context,
    inventory: Optional[Path] = typer.Option(
        None, "--inventory", "-i", help="Inventory the testbed was built from; only needed when the state file is gone "
        "and the inventory used a non-default prefix."),
) -> None:
    """Remove everything provisioning made: daemons, namespaces, links, iptables rules, cgroups,
    and the state file (local); the delays, K3s and, with provider openstack, the VMs and their
    network (k3s, by playbooks/teardown.yml). Idempotent; also cleans up after a crash or Ctrl-C
    during provisioning."""
    from harness.spec.inventory import load_inventory
    from harness.spec.testbed_state import load_state
    from harness.testbed.local.teardown import find, teardown as do_teardown

    state_dir = _state_dir(ctx)
    prefix = None
    try:
        state = load_state(state_dir)
    except Exception:  # a corrupt state file must not stop the cleanup
        state = None
    if state is not None and state.backend == "k3s":
        from harness.testbed.kube.provision import teardown as kube_teardown

        kube_teardown(state, state_dir)
        print(f"removed the K3s testbed '{state.name}' (delays, K3s"
              f"{', OpenStack VMs and network' if state.backend_data.get('provider') == 'openstack' else ''})")
        return
    if state is not None:
        prefix = state.backend_data.get("layout", {}).get("prefix")
    if prefix is None:
        prefix = load_inventory(inventory).local.prefix
    removed = do_teardown(prefix, state_dir)
    left = find(prefix, state_dir)
    if not left.empty():
        from harness.errors import TestbedError

        raise TestbedError(f"teardown left {left.describe()}")
    print("nothing to remove" if removed.empty() else f"removed {removed.describe()}")
