"""harness teardown: remove everything provisioning made."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from harness.cli.main import app
from harness.cli.options import named


@app.command()
def teardown(
    ctx: typer.Context,
    inventory: Optional[Path] = typer.Option(
        None, "--inventory", "-i", callback=named("inventory"), help="Inventory the testbed was built from; only needed when the state file is gone "
        "and the inventory used a non-default prefix."),
) -> None:
    """Remove everything provisioning made: daemons, namespaces, links, iptables rules, cgroups,
    and the state file (local); the delays, K3s and, with provider openstack, the VMs and their
    network (k3s, by playbooks/teardown.yml). Idempotent; also cleans up after a crash or Ctrl-C
    during provisioning."""
    from harness.spec.inventory import load_inventory
    from harness.spec.testbed_state import load_state
    from harness.testbed.backends import backend

    state_dir = ctx.obj["state_dir"]
    try:
        state = load_state(state_dir)
    except Exception:  # a corrupt state file must not stop the cleanup
        state = None
    from harness.testbed.lock import exclusive

    inv = load_inventory(inventory)
    with exclusive(state_dir):
        print(backend(state.backend if state is not None else inv.backend).teardown(state, inv, state_dir))
        from harness.spec.testbed_state import forget_state_dir

        forget_state_dir(state_dir)
