"""Open the testbed recorded in the state directory as a Cluster, whatever its backend."""

from __future__ import annotations

from pathlib import Path

from harness.errors import UserError
from harness.spec.testbed_state import TestbedState, load_state, state_path
from harness.testbed.backends import backend
from harness.testbed.cluster import Cluster


def require_state(state_dir: Path) -> TestbedState:
    state = load_state(state_dir)
    if state is None:
        raise UserError("no testbed is provisioned here; run 'harness provision' first", source=str(state_path(state_dir)))
    if state.status != "ready":
        raise UserError("provisioning did not finish; run 'harness provision' again or 'harness teardown'",
                        source=str(state_path(state_dir)))
    return state


def open_cluster(state_dir: Path, state: TestbedState | None = None) -> Cluster:
    """``state``: the recorded one, possibly changed (``harness reschedule --namespace``)."""
    state = state or require_state(state_dir)
    return backend(state.backend, str(state_path(state_dir))).open(state, state_dir)
