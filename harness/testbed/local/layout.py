"""Names and addresses of everything the local testbed creates, derived from the inventory.

Pure functions: provisioning, status, teardown and the tests all derive the same names from
(prefix, subnet), so teardown can find a half-built testbed without any state file.
"""

from __future__ import annotations

import ipaddress
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # keep this module light: Ansible modules import it once per task
    from harness.spec.inventory import Inventory

# Node addresses live in x.y.1.0/24 so the delayer and netem can tell node-to-node traffic
# (delayed) from harness-to-node traffic (x.y.0.2 -> node, never delayed).
NODE_OCTET = 1


@dataclass(frozen=True)
class NodeLayout:
    name: str
    type: str
    tier: str
    index: int
    netns: str
    address: str
    hub_veth: str  # the hub end of the node's link; its egress carries traffic *to* the node
    cpus: float
    memory_gb: float
    speed: float
    cpu_quota_us: int
    cpu_period_us: int
    memory_bytes: int
    role: str = ""
    site: str | None = None
    cost: float = 0.0
    gpus: int = 0


@dataclass(frozen=True)
class Layout:
    prefix: str
    subnet: str
    node_subnet: str
    hub_netns: str
    hub_address: str
    root_veth: str
    hub_root_veth: str
    root_address: str
    cgroup: str  # relative path under each controller, e.g. harness-hx
    nodes: tuple[NodeLayout, ...]
    bandwidth_slice_us: int | None = None  # the kernel's CFS bandwidth slice while up (None: the host's)

    def node(self, name: str) -> NodeLayout:
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(name)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "Layout":
        d = dict(d)
        d["nodes"] = tuple(NodeLayout(**n) for n in d["nodes"])
        return cls(**d)


def base_names(prefix: str, subnet: str) -> dict[str, str]:
    """The names that do not depend on the nodes (what teardown needs)."""
    net = ipaddress.ip_network(subnet)
    base = int(net.network_address)
    return {
        "hub_netns": f"{prefix}-hub",
        "root_veth": f"{prefix}-root",
        "hub_root_veth": f"{prefix}-up",
        "hub_address": str(ipaddress.ip_address(base + 1)),
        "root_address": str(ipaddress.ip_address(base + 2)),
        "node_subnet": str(ipaddress.ip_network((base + (NODE_OCTET << 8), 24))),
        "cgroup": f"harness-{prefix}",
    }


def node_netns(prefix: str, node: str) -> str:
    return f"{prefix}-{node}"


def layout_for(inv: "Inventory") -> Layout:
    opts = inv.local
    names = base_names(opts.prefix, opts.subnet)
    base = int(ipaddress.ip_network(opts.subnet).network_address)
    fastest = max(t.speed for t in inv.node_types.values())
    nodes = []
    for i, node in enumerate(inv.nodes):
        nt = inv.node_type(node)
        share = opts.fastest_node_cpus * nt.speed / fastest  # cores of bandwidth this node gets
        nodes.append(
            NodeLayout(
                name=node.name,
                type=node.type,
                tier=nt.tier,
                index=i,
                netns=node_netns(opts.prefix, node.name),
                address=str(ipaddress.ip_address(base + (NODE_OCTET << 8) + i + 1)),
                hub_veth=f"{opts.prefix}n{i}",
                cpus=nt.cpus,
                memory_gb=nt.memory_gb,
                speed=nt.speed,
                cpu_quota_us=max(1000, round(share * opts.cpu_period_us)),
                cpu_period_us=opts.cpu_period_us,
                memory_bytes=int(nt.memory_gb * 2**30),
                role=inv.role(nt.tier),
                site=node.site,
                cost=nt.cost,
                gpus=nt.gpus,
            )
        )
    return Layout(prefix=opts.prefix, subnet=opts.subnet, nodes=tuple(nodes), bandwidth_slice_us=opts.bandwidth_slice_us,
                  **names)
