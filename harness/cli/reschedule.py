"""harness reschedule: the rescheduler as a service beside (or inside) a K3s testbed."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from harness.cli.main import app


@app.command()
def reschedule(
    ctx: typer.Context,
    policy: str = typer.Option("reach", help="Policy that reschedules (reach, rsdql, or a heuristic)."),
    model: Optional[Path] = typer.Option(None, help="Trained model (.pt) of a learned policy."),
    profile: Path = typer.Option(..., help="Profile JSON the policy's simulator view is built from."),
    testbed: Optional[Path] = typer.Option(None, help="Testbed state file (testbed.yaml); default: the one in --state-dir."),
    in_cluster: bool = typer.Option(False, "--in-cluster", help="Use the pod's service account (inside the cluster)."),
    namespace: Optional[str] = typer.Option(None, help="Namespace of the app; default: the testbed's."),
    period: float = typer.Option(5.0, min=0.1, help="Seconds between rounds."),
    max_moves: int = typer.Option(10, min=0, help="Most moves per round."),
    rounds: int = typer.Option(0, min=0, help="Stop after this many rounds (0: run until stopped)."),
) -> None:
    """Run the rescheduler against the app deployed on a K3s testbed, round after round: bind
    the pods nobody bound yet (by the policy's placer), then let the policy move pods
    make-before-break. Events are printed as JSON lines. In the cluster it runs as the
    Deployment of manifests/rescheduler.yaml.j2 with least-privilege RBAC (docs/real-testbed.md)."""
    import tempfile

    from harness.errors import UserError
    from harness.policies import build
    from harness.spec.loader import load_model
    from harness.spec.profile import load_profile
    from harness.rescheduler.service import run_service
    from harness.spec.testbed_state import TestbedState, state_path
    from harness.testbed.kube.incluster import in_cluster as open_in_cluster
    from harness.testbed.open import open_cluster, require_state

    state_dir: Path = ctx.obj["state_dir"]
    if in_cluster:
        state = load_model(TestbedState, testbed or state_path(state_dir))
        cluster = open_in_cluster(state, namespace or state.backend_data.get("namespace", "harness"),
                                  Path(tempfile.mkdtemp(prefix="harness-")))
    else:
        if testbed is not None:
            raise UserError("--testbed is for --in-cluster; outside the cluster the state in --state-dir is used",
                            field="--testbed")
        state = require_state(state_dir)
        if state.backend != "k3s":
            raise UserError("harness reschedule serves K3s testbeds; on the local testbed the rescheduler runs "
                            "inside 'harness run'", source=str(state_path(state_dir)), field="backend")
        if namespace:
            state.backend_data["namespace"] = namespace
        cluster = open_cluster(state_dir, state)
    pol = build(policy, **({"model": str(model)} if model else {}))
    try:
        run_service(cluster, load_profile(profile), pol, period, max_moves, rounds)
    except KeyboardInterrupt:
        pass
