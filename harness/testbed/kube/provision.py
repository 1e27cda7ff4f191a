"""``harness provision`` / ``teardown`` for the K3s backend: the playbooks in order, the state.

Order: openstack.yml (provider openstack: VMs, and their addresses back), the rendered Ansible
inventory, k3s.yml, cell-image.yml, netem.yml, monitoring.yml, then the RTT measured between
every pair of nodes (rtt.yml). The state is recorded before the first playbook runs, so
``harness teardown`` finds a half-built testbed.
"""

from __future__ import annotations

import io
import json
import shutil
import sys
import tarfile
from pathlib import Path
from typing import Callable

import yaml

from harness import shipped
from harness.errors import UserError
from harness.provision.runner import PlaybookResult, Progress, run_playbook
from harness.spec.inventory import Inventory
from harness.spec.testbed_state import NodeState, TestbedState, load_state, now_iso, save_state, state_path
from harness.testbed.kube import ansible_inventory, manifests

PACKAGE = Path(__file__).resolve().parents[2]  # the harness package's source, for the cell image
# what the cell needs at run time: nothing of the simulator, the policies or the CLI
CELL_REQUIREMENTS = ["aiohttp==3.14.5", "prometheus-client==0.26.0", "pydantic==2.14.3", "pyyaml==6.0.3"]
STEPS = ["k3s.yml", "cell-image.yml", "netem.yml", "monitoring.yml"]


def files_dir(state_dir: Path) -> Path:
    return state_dir / "k3s"


def inventory_file(state_dir: Path) -> Path:
    return files_dir(state_dir) / "inventory.yml"


def node_states(inv: Inventory, addresses: dict[str, dict[str, str]]) -> list[NodeState]:
    return [NodeState(name=n.name, type=n.type, tier=inv.node_type(n).tier, address=addresses[n.name]["private"],
                      cpus=inv.node_type(n).cpus, memory_gb=inv.node_type(n).memory_gb, speed=inv.node_type(n).speed,
                      role=inv.role(inv.node_type(n).tier), site=n.site, cost=inv.node_type(n).cost,
                      gpus=inv.node_type(n).gpus) for n in inv.nodes]


def cell_image_context(path: Path) -> Path:
    """The image's build context as a tar.gz: images/cell/Dockerfile, the cell's requirements and
    the harness package's source (no tests, models or results)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tar:
        tar.add(shipped.ROOT / "images/cell/Dockerfile", arcname="Dockerfile")
        req = ("\n".join(CELL_REQUIREMENTS) + "\n").encode()
        info = tarfile.TarInfo("requirements.txt")
        info.size = len(req)
        tar.addfile(info, io.BytesIO(req))
        tar.add(PACKAGE, arcname="harness", filter=lambda t: None if "__pycache__" in t.name or t.name.endswith(".pt")
                or t.name.startswith("harness/_shipped") else t)
    return path


def _addresses(inv: Inventory, state_dir: Path, on_progress) -> dict[str, dict[str, str]]:
    if inv.k3s.provider == "ssh":
        return ansible_inventory.ssh_addresses(inv)
    hosts_file = files_dir(state_dir) / "openstack-hosts.json"
    run_playbook("openstack.yml", extravars=ansible_inventory.openstack_vars(inv, hosts_file),
                 private_data_dir=state_dir / "ansible", on_progress=on_progress)
    return json.loads(hosts_file.read_text())


def provision(inv: Inventory, state_dir: Path, on_progress: Callable[[Progress], None] | None = None,
              measure: bool = True) -> tuple[TestbedState, PlaybookResult]:
    """``measure`` is accepted for the backend table; on K3s the RTT is always measured (rtt.yml)."""
    k = inv.k3s
    assert k is not None
    existing = load_state(state_dir)
    if existing is not None and existing.inventory_checksum != inv.checksum():
        raise UserError(f"a testbed built from another inventory ({existing.name}) is recorded here; "
                        "run 'harness teardown' first", source=str(state_path(state_dir)))
    files = files_dir(state_dir)
    files.mkdir(parents=True, exist_ok=True)
    state = existing or TestbedState(
        backend="k3s", name=inv.name, status="provisioning", inventory_checksum=inv.checksum(),
        inventory=inv.model_dump(mode="json"), created=now_iso(), nodes=[], rtt_configured_ms=inv.rtt_matrix(),
        latency_injector="netem",
        backend_data={"provider": k.provider, "namespace": k.namespace, "image": k.image,
                      "gateway_node_port": k.gateway_node_port, "kubeconfig": str(files / "kubeconfig"),
                      "ansible_inventory": str(inventory_file(state_dir)), "failed_nodes": []})
    save_state(state_dir, state)  # before anything is built: teardown finds a half-built testbed
    addresses = _addresses(inv, state_dir, on_progress)
    state.backend_data["addresses"] = addresses
    state.nodes = node_states(inv, addresses)
    save_state(state_dir, state)
    ansible_inventory.write(ansible_inventory.render(inv, addresses, files, state.rtt_configured_ms),
                            inventory_file(state_dir))
    cell_image_context(files / "cell-image.tar.gz")
    (files / "prometheus.yaml").write_text(yaml.safe_dump_all(manifests.prometheus_objects(k.namespace, k.prometheus_node_port)))
    result = None
    for playbook in STEPS:
        result = run_playbook(playbook, extravars={}, private_data_dir=state_dir / "ansible",
                              on_progress=on_progress, inventory=inventory_file(state_dir))
    server = ansible_inventory.server_node(inv)
    # the harness runs its experiments on the client node, inside the nodes' network
    state.prometheus_url = f"http://{addresses[server]['private']}:{k.prometheus_node_port}"
    state.latency_injector_reason = "tc netem on every node (netem.yml)"
    state.rtt_measured_ms = measure_rtt(state, state_dir, [n.name for n in state.nodes])
    state.status = "ready"
    save_state(state_dir, state)
    return state, result


def _inventory(state: TestbedState) -> Inventory:
    from harness.spec.inventory import check_semantics

    return check_semantics(Inventory.model_validate(state.inventory), "testbed state")


def apply_latency(state: TestbedState, state_dir: Path, matrix: dict[str, dict[str, float]]) -> None:
    """Re-render the delay groups from ``matrix`` and re-run netem.yml (it replaces the qdiscs)."""
    inv = _inventory(state)
    ansible_inventory.write(ansible_inventory.render(inv, state.backend_data["addresses"], files_dir(state_dir), matrix),
                            inventory_file(state_dir))
    run_playbook("netem.yml", extravars={}, private_data_dir=state_dir / "ansible", inventory=inventory_file(state_dir))


def parse_ping_lines(stdouts: list[str]) -> dict[str, dict[str, float | None]]:
    """Lines ``<from> <to> <avg ms>`` (avg empty when every ping was lost)."""
    out: dict[str, dict[str, float | None]] = {}
    for text in stdouts:
        for line in text.splitlines():
            parts = line.split()
            if len(parts) >= 2:
                out.setdefault(parts[0], {})[parts[1]] = float(parts[2]) if len(parts) > 2 else None
    return out


def measure_rtt(state: TestbedState, state_dir: Path, nodes: list[str]) -> dict[str, dict[str, float | None]]:
    result = run_playbook("rtt.yml", extravars={"rtt_nodes": nodes}, private_data_dir=state_dir / "ansible",
                          inventory=inventory_file(state_dir))
    measured = parse_ping_lines([r.get("stdout", "") for r in result.results.get("Ping every other node", [])])
    return {a: {b: 0.0 if a == b else measured.get(a, {}).get(b) for b in nodes} for a in nodes}


def teardown(state: TestbedState, state_dir: Path, on_progress: Callable[[Progress], None] | None = None) -> None:
    """teardown.yml: the delays, K3s, and (provider openstack) the VMs and their network."""
    extravars = {"harness_provider": state.backend_data.get("provider", "ssh")}
    if extravars["harness_provider"] == "openstack":
        extravars.update(ansible_inventory.openstack_vars(_inventory(state), files_dir(state_dir) / "openstack-hosts.json"))
    inv_file = inventory_file(state_dir)
    run_playbook("teardown.yml", extravars=extravars, private_data_dir=state_dir / "ansible",
                 on_progress=on_progress, inventory=inv_file if inv_file.exists() else None)
    state_path(state_dir).unlink(missing_ok=True)
    shutil.rmtree(state_dir / "ansible" / "artifacts", ignore_errors=True)  # playbook output: not kept after


def teardown_testbed(state: TestbedState | None, inventory: Inventory, state_dir: Path) -> str:
    """The backend table's teardown: with no state file there is nothing this harness knows to remove."""
    if state is None:
        return "nothing to remove (no state file: the K3s testbed was never provisioned from here)"
    teardown(state, state_dir)
    return (f"removed the K3s testbed '{state.name}' (delays, K3s"
            f"{', OpenStack VMs and network' if state.backend_data.get('provider') == 'openstack' else ''})")


def open_kube(state: TestbedState, state_dir: Path):
    """The K3s testbed as a Cluster, through the kubeconfig the k3s playbook fetched."""
    from harness.errors import TestbedError
    from harness.testbed.kube.backend import KubeCluster
    from harness.testbed.kube.connect import kubeconfig_client
    from harness.testbed.kube.node_power import AnsibleNodePower

    kubeconfig = Path(state.data("kubeconfig", state_dir))
    if not kubeconfig.exists():
        raise UserError("the kubeconfig is missing; run 'harness provision' again", source=str(kubeconfig))
    api = kubeconfig_client(kubeconfig, error=TestbedError)  # every call under a request timeout
    power = AnsibleNodePower(Path(state.data("ansible_inventory", state_dir)), state_dir / "ansible")
    return KubeCluster(state, state_dir, api, power)


if __name__ == "__main__":  # pragma: no cover - a manual aid: python -m ... <out.tar.gz>
    print(cell_image_context(Path(sys.argv[1])))
