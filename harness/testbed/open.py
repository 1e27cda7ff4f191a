"""Open the testbed recorded in the state directory as a Cluster, whatever its backend."""

from __future__ import annotations

from pathlib import Path

from harness.errors import UserError
from harness.spec.testbed_state import TestbedState, load_state, state_path
from harness.testbed.cluster import Cluster


def require_state(state_dir: Path) -> TestbedState:
    state = load_state(state_dir)
    if state is None:
        raise UserError("no testbed is provisioned here; run 'harness provision' first", source=str(state_path(state_dir)))
    if state.status != "ready":
        raise UserError("provisioning did not finish; run 'harness provision' again or 'harness teardown'",
                        source=str(state_path(state_dir)))
    return state


def open_cluster(state_dir: Path) -> Cluster:
    state = require_state(state_dir)
    if state.backend == "local":
        from harness.testbed.local.backend import LocalCluster

        return LocalCluster(state, state_dir)
    if state.backend == "k3s":
        from harness.testbed.kube.provision import open_kube

        return open_kube(state, state_dir)
    raise UserError(f"backend {state.backend!r} is not supported", source=str(state_path(state_dir)), field="backend")
