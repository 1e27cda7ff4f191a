"""``harness provision`` for the local backend: validate, run playbooks/local.yml, measure, record."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Callable

from harness.errors import UserError
from harness.provision.runner import PlaybookResult, Progress, run_playbook
from harness.spec.inventory import Inventory
from harness.spec.testbed_state import NodeState, TestbedState, load_state, now_iso, save_state, state_path
from harness.testbed.local import linkemu, monitoring, network, rtt
from harness.testbed.local.layout import layout_for


MAX_NODES = 250


def provision(inv: Inventory, state_dir: Path, on_progress: Callable[[Progress], None] | None = None,
              measure: bool = True) -> tuple[TestbedState, PlaybookResult]:
    if len(inv.nodes) > MAX_NODES:  # one /24 of veth addresses; a simulated inventory has no such cap
        raise UserError(f"{len(inv.nodes)} nodes; the local testbed holds at most {MAX_NODES} (a larger continuum "
                        "is simulated: harness evaluate SCENARIO --inventory FILE)", field="nodes")
    if os.geteuid() != 0:
        raise UserError("the local testbed needs root (network namespaces, cgroups, iptables); run as root")
    existing = load_state(state_dir)
    if existing is not None and existing.inventory_checksum != inv.checksum():
        raise UserError(
            f"a testbed built from another inventory ({existing.name}) is recorded here; "
            "run 'harness teardown' first", source=str(state_path(state_dir)))
    layout = layout_for(inv)
    if existing is None and network.netns_exists(layout.hub_netns):
        raise UserError(
            f"namespaces with prefix '{layout.prefix}' exist but were not provisioned from {state_dir}; "
            "run 'harness teardown' there, or set local.prefix and local.subnet to others in the inventory")
    state = existing or initial_state(inv, layout)
    # Recorded before anything is built: teardown finds a half-built testbed from it.
    save_state(state_dir, state)
    result = run_playbook(
        "local.yml",
        extravars={
            "harness_layout": layout.to_dict(),
            # set_latency may have changed the matrix since the last run: keep the live one
            "harness_rtt_ms": state.rtt_configured_ms,
            "harness_bandwidth_mbit": state.bandwidth_mbit,
            "harness_latency_injector": inv.local.latency_injector,
            "harness_state_dir": str(state_dir.resolve()),
            "harness_python": sys.executable,
            "harness_prometheus_port": inv.local.prometheus_port,
        },
        private_data_dir=state_dir / "ansible",
        on_progress=on_progress,
    )
    pre = result.results["Check host prerequisites and probe the kernel for sch_netem"][0]
    state.latency_injector, state.latency_injector_reason = pre["injector"], pre["reason"]
    state.bandwidth_emulation = linkemu.bandwidth_emulation(pre["injector"], state.bandwidth_mbit)
    state.prometheus_url = monitoring.url(inv.local.prometheus_port)
    if measure:
        state.rtt_measured_ms = rtt.measure_matrix(layout)
    state.status = "ready"
    save_state(state_dir, state)
    return state, result


def initial_state(inv: Inventory, layout) -> TestbedState:
    """What provisioning records before it builds anything (status "provisioning")."""
    return TestbedState(
        backend="local", name=inv.name, status="provisioning", inventory_checksum=inv.checksum(),
        inventory=inv.model_dump(mode="json"), created=now_iso(),
        nodes=[NodeState(name=n.name, type=n.type, tier=n.tier, address=n.address, cpus=n.cpus,
                         memory_gb=n.memory_gb, speed=n.speed, role=n.role, site=n.site, cost=n.cost, gpus=n.gpus)
               for n in layout.nodes],
        rtt_configured_ms=inv.rtt_matrix(),
        bandwidth_mbit=inv.bandwidth_matrix(),
        backend_data={"layout": layout.to_dict()},
    )
