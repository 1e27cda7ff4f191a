"""Network namespaces and veth links of the local testbed. Every ``ensure_*`` is idempotent
and returns whether it changed anything (what Ansible reports as ``changed``)."""

from __future__ import annotations

from harness.testbed.local.layout import Layout, NodeLayout
from harness.testbed.local.sh import in_netns, ok, run

NODE_IFACE = "eth0"


def netns_list() -> list[str]:
    out = run(["ip", "netns", "list"], check=False).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def netns_exists(name: str) -> bool:
    return name in netns_list()


def netns_pids(name: str) -> list[int]:
    """Every process in the network namespace (none when it does not exist)."""
    return [int(p) for p in run(["ip", "netns", "pids", name], check=False).stdout.split()]


def link_exists(dev: str, netns: str | None = None) -> bool:
    argv = ["ip", "link", "show", "dev", dev]
    return ok(["ip", "-n", netns, *argv[1:]] if netns else argv)


def _ip(netns: str | None, *args: str, check: bool = True):
    return run(["ip", *(["-n", netns] if netns else []), *args], check=check)


def _ensure_netns(name: str) -> bool:
    if netns_exists(name):
        return False
    run(["ip", "netns", "add", name])
    _ip(name, "link", "set", "lo", "up")
    return True


def _ensure_addr(netns: str | None, dev: str, cidr: str) -> bool:
    if cidr in _ip(netns, "-o", "addr", "show", "dev", dev).stdout:
        return False
    _ip(netns, "addr", "add", cidr, "dev", dev)
    return True


def _ensure_route(netns: str | None, *spec: str) -> bool:
    """``ip route replace`` is idempotent, but we report changed only when the route was missing."""
    present = _ip(netns, "route", "show", *spec[:1], check=False).stdout.strip()
    wanted_dev = spec[spec.index("dev") + 1] if "dev" in spec else None
    if present and (wanted_dev is None or f"dev {wanted_dev}" in present):
        return False
    _ip(netns, "route", "replace", *spec)
    return True


def _link_flags(netns: str | None, dev: str) -> list[str]:
    proc = _ip(netns, "-o", "link", "show", "dev", dev, check=False)
    if proc.returncode != 0:
        return []
    return proc.stdout.split("<", 1)[-1].split(">", 1)[0].split(",")


def _link_up(netns: str | None, dev: str) -> bool:
    if "UP" in _link_flags(netns, dev):
        return False
    _ip(netns, "link", "set", dev, "up")
    return True


def _sysctl(netns: str, key: str, value: str) -> bool:
    current = run(in_netns(netns, ["sysctl", "-n", key])).stdout.strip()
    if current == value:
        return False
    run(in_netns(netns, ["sysctl", "-q", "-w", f"{key}={value}"]))
    return True


def ensure_hub(layout: Layout) -> bool:
    """The hub namespace routes between nodes; a veth pair connects it to the root namespace."""
    hub = layout.hub_netns
    changed = _ensure_netns(hub)
    changed |= _sysctl(hub, "net.ipv4.ip_forward", "1")
    # Nodes share the hub's address on every hub link; strict reverse-path filtering would drop them.
    changed |= _sysctl(hub, "net.ipv4.conf.all.rp_filter", "0")
    if not link_exists(layout.root_veth):
        if link_exists(layout.hub_root_veth, hub):
            _ip(hub, "link", "del", layout.hub_root_veth)
        run(["ip", "link", "add", layout.root_veth, "type", "veth", "peer", "name", layout.hub_root_veth, "netns", hub])
        changed = True
    changed |= _ensure_addr(None, layout.root_veth, f"{layout.root_address}/32")
    changed |= _ensure_addr(hub, layout.hub_root_veth, f"{layout.hub_address}/32")
    changed |= _link_up(None, layout.root_veth)
    changed |= _link_up(hub, layout.hub_root_veth)
    changed |= _ensure_route(None, f"{layout.hub_address}/32", "dev", layout.root_veth, "scope", "link")
    changed |= _ensure_route(None, layout.node_subnet, "via", layout.hub_address, "dev", layout.root_veth, "onlink")
    changed |= _ensure_route(hub, f"{layout.root_address}/32", "dev", layout.hub_root_veth, "scope", "link")
    return changed


def ensure_node(layout: Layout, node: NodeLayout) -> bool:
    """The node's namespace, its link to the hub, its address and routes. Also re-applied on recovery."""
    hub = layout.hub_netns
    changed = _ensure_netns(node.netns)
    if not link_exists(NODE_IFACE, node.netns):
        if link_exists(node.hub_veth, hub):
            _ip(hub, "link", "del", node.hub_veth)
        tmp = f"{layout.prefix}p{node.index}"
        run(["ip", "link", "add", node.hub_veth, "netns", hub, "type", "veth", "peer", "name", tmp, "netns", node.netns])
        _ip(node.netns, "link", "set", tmp, "name", NODE_IFACE)
        changed = True
    changed |= _ensure_addr(node.netns, NODE_IFACE, f"{node.address}/32")
    changed |= _ensure_addr(hub, node.hub_veth, f"{layout.hub_address}/32")
    changed |= _link_up(node.netns, NODE_IFACE)
    changed |= _link_up(hub, node.hub_veth)
    changed |= _ensure_route(node.netns, f"{layout.hub_address}/32", "dev", NODE_IFACE, "scope", "link")
    changed |= _ensure_route(node.netns, "default", "via", layout.hub_address, "dev", NODE_IFACE, "onlink")
    changed |= _ensure_route(hub, f"{node.address}/32", "dev", node.hub_veth, "scope", "link")
    return changed


def set_node_link(layout: Layout, node: NodeLayout, up: bool) -> None:
    """Take both ends of a node's link down (a crashed machine) or bring them back."""
    if not up:
        _ip(layout.hub_netns, "link", "set", node.hub_veth, "down", check=False)
        _ip(node.netns, "link", "set", NODE_IFACE, "down", check=False)
    else:
        ensure_node(layout, node)


def node_link_up(layout: Layout, node: NodeLayout) -> bool:
    flags = _link_flags(layout.hub_netns, node.hub_veth)
    return "UP" in flags and "LOWER_UP" in flags
