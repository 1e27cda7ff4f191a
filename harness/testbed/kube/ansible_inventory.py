"""The Ansible inventory the K3s playbooks run against, rendered from a harness inventory.

Groups: harness_server (the first cloud node, K3s server), harness_agents (the others),
harness_nodes (all). Each host carries its addresses and its netem delay groups: one group per
distinct one-way delay (half the configured RTT; the peer adds the other half on its side).
"""

from __future__ import annotations

from pathlib import Path

import yaml

from harness.spec.inventory import Inventory


def server_node(inv: Inventory) -> str:
    return next(n.name for n in inv.nodes if inv.role(inv.node_type(n).tier) == "cloud")


def netem_groups(rtt_row: dict[str, float], addresses: dict[str, str], me: str) -> list[dict]:
    """Peers of ``me`` grouped by one-way delay, in ms; zero delays need no group."""
    by_delay: dict[float, list[str]] = {}
    for peer, rtt in rtt_row.items():
        if peer == me or rtt <= 0:
            continue
        by_delay.setdefault(round(rtt / 2, 3), []).append(addresses[peer])
    return [{"delay_ms": d, "peers": sorted(p)} for d, p in sorted(by_delay.items())]


def render(inv: Inventory, addresses: dict[str, dict[str, str]], files: Path,
           rtt_ms: dict[str, dict[str, float]] | None = None) -> dict:
    """``addresses``: node -> {"private": node-to-node address, "public": SSH address}.
    ``files``: where the playbooks read and write the harness's files (kubeconfig, image context)."""
    k = inv.k3s
    assert k is not None, "render needs a k3s inventory"
    rtt = rtt_ms or inv.rtt_matrix()
    private = {n: a["private"] for n, a in addresses.items()}
    server = server_node(inv)
    hosts = {}
    for n in inv.nodes:
        hosts[n.name] = {
            "ansible_host": addresses[n.name]["public"],
            "harness_private_address": addresses[n.name]["private"],
            "harness_node_type": n.type,
            "harness_tier": inv.node_type(n).tier,
            "netem_groups": netem_groups(rtt[n.name], private, n.name),
        }
    agents = {h: {} for h in hosts if h != server}
    return {"all": {
        "vars": {
            "ansible_user": k.ssh_user,
            "ansible_ssh_private_key_file": k.ssh_private_key_file,
            "ansible_python_interpreter": "auto_silent",
            "harness_provider": k.provider,
            "k3s_server_version": k.k3s_version,
            "k3s_agent_version": k.k3s_version,
            "k3s_server_kubeconfig": str(files / "kubeconfig"),
            "k3s_labels_nodes": [{"name": n.name, "type": n.type, "tier": inv.node_type(n).tier} for n in inv.nodes],
            "netem_interface": k.netem_interface,
            "cell_image_name": k.image,
            "cell_image_context": str(files / "cell-image.tar.gz"),
            "monitoring_manifest": str(files / "prometheus.yaml"),
            "monitoring_namespace": k.namespace,
        },
        "children": {
            "harness_nodes": {"children": {"harness_server": {"hosts": {server: {}}}, "harness_agents": {"hosts": agents}}},
        },
        "hosts": hosts,
    }}


def write(doc: dict, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# Rendered by harness from its inventory; re-rendered on every provision.\n"
                    + yaml.safe_dump(doc, sort_keys=False))
    return path


def ssh_addresses(inv: Inventory) -> dict[str, dict[str, str]]:
    """Provider ssh: the one address given per host serves for SSH and between nodes."""
    assert inv.k3s is not None
    return {n: {"private": a, "public": a} for n, a in inv.k3s.hosts.items()}


def openstack_vars(inv: Inventory, hosts_file: Path) -> dict:
    """Extra vars of openstack.yml: names and flavours only; credentials stay in clouds.yaml."""
    k = inv.k3s
    assert k is not None and k.openstack is not None
    os_ = k.openstack
    return {
        "openstack_vms_cloud": os_.cloud,
        "openstack_vms_prefix": os_.name_prefix,
        "openstack_vms_image": os_.image,
        "openstack_vms_external_network": os_.external_network,
        "openstack_vms_network_cidr": os_.network_cidr,
        "openstack_vms_public_key_file": os_.public_key_file,
        "openstack_vms_ssh_cidr": os_.ssh_cidr,
        "openstack_vms_nodes": [{"name": n.name, "flavour": os_.flavours[n.type]} for n in inv.nodes],
        "openstack_vms_hosts_file": str(hosts_file),
    }
