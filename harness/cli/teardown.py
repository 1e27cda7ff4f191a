"""harness teardown: remove everything provisioning made."""

from __future__ import annotations

from pathlib import Path
from typing import Optional


import typer

from harness.cli.main import app


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

    state_dir = ctx.obj["state_dir"]
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
