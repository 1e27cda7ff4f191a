"""harness predict: REACH's latency model on one placement, with its breakdown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from harness.cli.main import app
from harness.cli.options import named


@app.command()
def predict(
    ctx: typer.Context,
    app_file: Path = typer.Option(..., "--app", callback=named("app"), help="App JSON."),
    profile: Path = typer.Option(..., "--profile", callback=named("profile"), help="Profile JSON from 'harness profile'."),
    placement: Path = typer.Option(..., "--placement", help="YAML/JSON: service -> [node, ...], one per replica."),
    testbed: Optional[Path] = typer.Option(None, "--testbed", help="Testbed state file for nodes and RTTs "
                                           "(default: the profile's)."),
    rtt: str = typer.Option("measured", help="Which RTT matrix: measured or configured."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Predict the app's end-to-end latency for a placement with REACH's model (eqs. 2-9), with the
    breakdown: per service execution (T_E) and processing (T_S) time, per call the network time (D_S)."""
    from harness.errors import UserError
    from harness.sim.topology import model_for
    from harness.spec.app import load_app
    from harness.spec.loader import load_model
    from harness.spec.placement import load_placement
    from harness.spec.profile import load_profile
    from harness.spec.testbed_state import TestbedState

    if rtt not in ("measured", "configured"):
        raise UserError("--rtt must be 'measured' or 'configured'")
    a = load_app(app_file)
    prof = load_profile(profile)
    state = load_model(TestbedState, testbed) if testbed else None
    model = model_for(a, prof, state, rtt, source=str(profile))
    plan = load_placement(placement, a, list(model.topo.nodes))
    out = model.predict(plan)
    if json_out:
        print(json.dumps(out, indent=2))
        return
    print(f"predicted end-to-end latency: {out['latency_ms']:.2f} ms (user -> gateway {out['gateway_ms']:.2f} ms)")
    print(f"{'service':12s} {'nodes':28s} {'T_E ms':>9s} {'T_S ms':>9s}")
    for s, v in out["services"].items():
        print(f"{s:12s} {','.join(plan[s]):28s} {v['T_E_ms']:9.2f} {v['T_S_ms']:9.2f}")
    for e in out["edges"]:
        print(f"call {e['caller']} -> {e['callee']}: D_S {e['D_S_ms']:.2f} ms")
