"""Inter-node latency on the hub: ``tc netem`` where the kernel has it, else the NFQUEUE delayer.

Every node-to-node packet crosses the hub once, so each direction of a pair gets half the
configured round-trip time. Traffic between the harness (root namespace) and the nodes is
never delayed.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

from harness.errors import TestbedError
from harness.testbed.local.layout import Layout
from harness.testbed.local.sh import in_netns, run

QUEUE_NUM = 0
CHAIN = "HARNESS-DELAY"
NETEM_RATE = "10gbit"  # htb needs a rate; high enough never to shape
QUANTUM = "60000"  # what htb would pick for such a rate is too big; the kernel warns


def probe_netem(prefix: str) -> tuple[bool, str]:
    """Really add a netem qdisc in a scratch namespace: the only reliable test for sch_netem."""
    ns = f"{prefix}-probe"
    run(["ip", "netns", "del", ns], check=False)
    run(["ip", "netns", "add", ns])
    try:
        proc = run(["ip", "-n", ns, "link", "set", "lo", "up"], check=False)
        proc = run(in_netns(ns, ["tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms"]), check=False)
        return proc.returncode == 0, (proc.stderr or proc.stdout).strip()
    finally:
        run(["ip", "netns", "del", ns], check=False)


def choose_injector(requested: str, prefix: str) -> tuple[str, str]:
    """'netem' or 'nfqueue', and why."""
    if requested == "nfqueue":
        return "nfqueue", "requested in the inventory"
    has_netem, msg = probe_netem(prefix)
    if requested == "netem":
        if not has_netem:
            raise TestbedError(f"latency_injector: netem requested but this kernel cannot add a netem qdisc ({msg}); "
                               "load sch_netem (modprobe sch_netem, package linux-modules-extra) or use 'auto'")
        return "netem", "requested in the inventory"
    return ("netem", "kernel has sch_netem") if has_netem else ("nfqueue", f"kernel lacks sch_netem ({msg})")


def one_way_ms(rtt: dict[str, dict[str, float]], src: str, dst: str) -> float:
    return rtt[src][dst] / 2.0


# ---------------------------------------------------------------- netem
def _class_id(src_index: int) -> str:
    return f"1:{src_index + 10:x}"


def _leaf(delay_ms: float, rate_mbit: float | None) -> list[str]:
    rate = ["rate", f"{rate_mbit:g}mbit"] if rate_mbit else []
    return ["netem", "delay", f"{delay_ms:g}ms", *rate, "limit", "100000"]


def netem_commands(layout: Layout, rtt: dict[str, dict[str, float]],
                   bandwidth: dict[str, dict[str, float]] | None = None) -> list[list[str]]:
    """tc commands (run in the hub) that delay traffic *to* each node by the source's half-RTT,
    and limit it to the pair's bandwidth where a link sets one (netem's rate).

    On each hub link: an htb root whose default class (1:1) carries undelayed traffic from the
    harness, one class per source node with a netem leaf, and a u32 filter on the source address.
    """
    bandwidth = bandwidth or {}
    cmds: list[list[str]] = []
    for dst in layout.nodes:
        dev = dst.hub_veth
        cmds.append(["tc", "qdisc", "replace", "dev", dev, "root", "handle", "1:", "htb", "default", "1"])
        cmds.append(["tc", "class", "replace", "dev", dev, "parent", "1:", "classid", "1:1", "htb", "rate", NETEM_RATE, "quantum", QUANTUM])
        for src in layout.nodes:
            if src.name == dst.name:
                continue
            cid = _class_id(src.index)
            handle = f"{src.index + 10:x}:"
            cmds.append(["tc", "class", "replace", "dev", dev, "parent", "1:", "classid", cid, "htb", "rate", NETEM_RATE, "quantum", QUANTUM])
            cmds.append(["tc", "qdisc", "replace", "dev", dev, "parent", cid, "handle", handle,
                         *_leaf(one_way_ms(rtt, src.name, dst.name), bandwidth.get(src.name, {}).get(dst.name))])
            cmds.append(["tc", "filter", "replace", "dev", dev, "parent", "1:", "protocol", "ip", "prio", "1",
                         "handle", f"800::{src.index + 1:x}", "u32", "match", "ip", "src", f"{src.address}/32", "flowid", cid])
    return cmds


def netem_change_commands(layout: Layout, a: str, b: str, rtt_ms: float,
                          bandwidth: dict[str, dict[str, float]] | None = None) -> list[list[str]]:
    """Change the delay of one pair in both directions while running (its bandwidth kept)."""
    bandwidth = bandwidth or {}
    cmds = []
    for src, dst in ((layout.node(a), layout.node(b)), (layout.node(b), layout.node(a))):
        cmds.append(["tc", "qdisc", "change", "dev", dst.hub_veth, "parent", _class_id(src.index),
                     "handle", f"{src.index + 10:x}:", *_leaf(rtt_ms / 2, bandwidth.get(src.name, {}).get(dst.name))])
    return cmds


def bandwidth_emulation(injector: str, bandwidth: dict[str, dict[str, float]]) -> str | None:
    """How the testbed enforces link bandwidths, or why it cannot (None when no link sets one)."""
    if not bandwidth:
        return None
    if injector == "netem":
        return "netem rate on each limited pair"
    return "not emulated: the NFQUEUE delayer adds latency only (the kernel lacks sch_netem)"


def apply_netem(layout: Layout, rtt: dict[str, dict[str, float]], bandwidth: dict[str, dict[str, float]] | None = None) -> bool:
    """Apply the netem tree; report changed only if the qdiscs did not already say the same."""
    before = run(in_netns(layout.hub_netns, ["tc", "qdisc", "show"])).stdout
    for cmd in netem_commands(layout, rtt, bandwidth):
        run(in_netns(layout.hub_netns, cmd))
    return run(in_netns(layout.hub_netns, ["tc", "qdisc", "show"])).stdout != before


# ---------------------------------------------------------------- nfqueue
def nfqueue_rule(layout: Layout) -> list[str]:
    return ["-s", layout.node_subnet, "-d", layout.node_subnet, "-j", "NFQUEUE", "--queue-num", str(QUEUE_NUM)]


def ensure_nfqueue_rules(layout: Layout) -> bool:
    """Send node-to-node forwarded packets to the delayer's queue (rules live in the hub namespace,
    so deleting the hub removes them). No --queue-bypass: if the delayer dies, traffic stops
    instead of silently losing its latency."""
    hub = layout.hub_netns
    ipt = lambda *a, check=True: run(in_netns(hub, ["iptables", "-w", *a]), check=check)  # noqa: E731
    changed = False
    if ipt("-L", CHAIN, "-n", check=False).returncode != 0:
        ipt("-N", CHAIN)
        changed = True
    if ipt("-C", "FORWARD", "-j", CHAIN, check=False).returncode != 0:
        ipt("-A", "FORWARD", "-j", CHAIN)
        changed = True
    if ipt("-C", CHAIN, *nfqueue_rule(layout), check=False).returncode != 0:
        ipt("-A", CHAIN, *nfqueue_rule(layout))
        changed = True
    return changed


def delay_table(layout: Layout, rtt: dict[str, dict[str, float]]) -> dict[str, float]:
    """What the delayer reads: 'src-ip dst-ip' -> one-way delay in ms."""
    return {
        f"{a.address} {b.address}": one_way_ms(rtt, a.name, b.name)
        for a in layout.nodes for b in layout.nodes if a.name != b.name
    }


def write_delay_table(path: Path, layout: Layout, rtt: dict[str, dict[str, float]]) -> bool:
    """Write atomically (the delayer may be reading); report changed if the content differs."""
    text = json.dumps({"one_way_ms": delay_table(layout, rtt)}, indent=1, sort_keys=True)
    if path.exists() and path.read_text() == text:
        return False
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
    return True


def reload_delayer(pidfile: Path) -> None:
    try:
        pid = int(pidfile.read_text())
        os.kill(pid, signal.SIGHUP)
    except (FileNotFoundError, ValueError, ProcessLookupError):
        raise TestbedError(f"the latency delayer is not running (pidfile {pidfile}); run 'harness provision' again") from None
