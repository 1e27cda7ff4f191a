"""harness status: the testbed's nodes and their RTTs, configured and measured."""

from __future__ import annotations

import json

import typer

from harness.cli.main import app


def print_status(ctx: typer.Context, json_out: bool, measure: bool) -> None:
    from harness.cli.output import console as make_console
    from rich.table import Table

    from harness.spec.testbed_state import save_state
    from harness.testbed.open import open_cluster

    cluster = open_cluster(ctx.obj["state_dir"])
    state = cluster.state
    if measure:
        state.rtt_measured_ms = cluster.measure_rtt()
        save_state(ctx.obj["state_dir"], state)
    up = {n.name: cluster.node_up(n.name) for n in state.nodes}
    if json_out:
        doc = state.model_dump(mode="json", exclude={"inventory", "backend_data"})
        for n in doc["nodes"]:
            n["up"] = up[n["name"]]
        print(json.dumps(doc, indent=2))
        return
    console = make_console()
    injector = f"latency by {state.latency_injector}" if state.latency_injector else "latency: its own network's"
    t = Table(title=f"testbed '{state.name}' ({state.backend}, {injector})")
    for col in ("node", "type", "tier", "role", "site", "address", "cores", "mem GiB", "GPUs", "cost/h", "speed", "state"):
        t.add_column(col, no_wrap=True)
    for n in state.nodes:
        t.add_row(n.name, n.type, n.tier, n.role, n.site or "-", n.address, f"{n.cpus:g}", f"{n.memory_gb:g}",
                  f"{n.gpus:g}", f"{n.cost:g}", f"{n.speed:g}", "[green]up[/]" if up[n.name] else "[red]down[/]")
    console.print(t)
    # One row per pair: narrow enough for any terminal, and easy to grep.
    bw = state.bandwidth_mbit
    m = Table(title="round-trip time between nodes (ms)" + (f"; bandwidth: {state.bandwidth_emulation}" if bw else ""))
    for col in ("node a", "node b", "configured", "measured") + (("Mbit/s",) if bw else ()):
        m.add_column(col, no_wrap=True, justify="left" if col.startswith("node") else "right")
    names = [n.name for n in state.nodes]
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            meas = state.rtt_measured_ms.get(a, {}).get(b)
            row = [a, b, f"{state.rtt_configured_ms[a][b]:g}", "unreachable" if meas is None and state.rtt_measured_ms else
                   ("-" if meas is None else f"{meas:.2f}")]
            if bw:
                row.append(f"{bw[a][b]:g}" if b in bw.get(a, {}) else "-")
            m.add_row(*row)
    console.print(m)


@app.command()
def status(
    ctx: typer.Context,
    json_out: bool = typer.Option(False, "--json", help="Print machine-readable JSON."),
    measure: bool = typer.Option(False, "--measure", help="Measure the RTT matrix again now (a few seconds)."),
) -> None:
    """Nodes (type, tier, address, cores, memory, up/down) and measured vs configured RTT."""
    print_status(ctx, json_out, measure)
