"""Names and addresses derived from the inventory (pure; no root needed)."""

import ipaddress

from harness.spec.inventory import load_inventory
from harness.testbed.local import linkemu
from harness.testbed.local.layout import layout_for


def test_default_layout_names_fit_kernel_limits_and_addresses_are_unique():
    lay = layout_for(load_inventory())
    assert lay.hub_netns == "hx-hub" and lay.root_veth == "hx-root"
    links = [n.hub_veth for n in lay.nodes] + [lay.root_veth, lay.hub_root_veth]
    assert all(len(x) <= 15 for x in links)  # IFNAMSIZ - 1
    assert len(set(links)) == len(links)
    addrs = [n.address for n in lay.nodes]
    assert len(set(addrs)) == len(addrs)
    node_net = ipaddress.ip_network(lay.node_subnet)
    assert all(ipaddress.ip_address(a) in node_net for a in addrs)
    assert ipaddress.ip_address(lay.root_address) not in node_net  # harness traffic is never delayed


def test_cpu_quota_follows_relative_speed():
    lay = layout_for(load_inventory())
    share = {n.type: n.cpu_quota_us / n.cpu_period_us for n in lay.nodes}
    assert share["cloud-a"] == 0.9
    assert abs(share["cloud-a"] / share["edge-a"] - 1.5) < 0.01
    assert abs(share["cloud-a"] / share["edge-b"] - 2.0) < 0.01


def test_netem_commands_for_two_nodes_match_hand_written_list():
    inv = load_inventory().model_copy(deep=True)
    inv.nodes = inv.nodes[:1] + inv.nodes[2:3]  # cloud-a-1, edge-a-1
    lay = layout_for(inv)
    cmds = [" ".join(c) for c in linkemu.netem_commands(lay, inv.rtt_matrix())]
    assert cmds == [
        "tc qdisc replace dev hxn0 root handle 1: htb default 1",
        "tc class replace dev hxn0 parent 1: classid 1:1 htb rate 10gbit quantum 60000",
        "tc class replace dev hxn0 parent 1: classid 1:b htb rate 10gbit quantum 60000",
        "tc qdisc replace dev hxn0 parent 1:b handle b: netem delay 25ms limit 100000",
        "tc filter replace dev hxn0 parent 1: protocol ip prio 1 handle 800::2 u32 match ip src 10.230.1.2/32 flowid 1:b",
        "tc qdisc replace dev hxn1 root handle 1: htb default 1",
        "tc class replace dev hxn1 parent 1: classid 1:1 htb rate 10gbit quantum 60000",
        "tc class replace dev hxn1 parent 1: classid 1:a htb rate 10gbit quantum 60000",
        "tc qdisc replace dev hxn1 parent 1:a handle a: netem delay 25ms limit 100000",
        "tc filter replace dev hxn1 parent 1: protocol ip prio 1 handle 800::1 u32 match ip src 10.230.1.1/32 flowid 1:a",
    ]
    change = [" ".join(c) for c in linkemu.netem_change_commands(lay, "cloud-a-1", "edge-a-1", 80)]
    assert change == [
        "tc qdisc change dev hxn1 parent 1:a handle a: netem delay 40ms limit 100000",
        "tc qdisc change dev hxn0 parent 1:b handle b: netem delay 40ms limit 100000",
    ]


def test_a_link_bandwidth_becomes_netem_rate_on_that_pair_only():
    from harness.spec.inventory import Link

    inv = load_inventory().model_copy(deep=True)
    inv.links = [Link(nodes=["cloud-a-1", "edge-a-1"], bandwidth_mbit=100)]
    lay = layout_for(inv)
    bw = inv.bandwidth_matrix()
    leaves = [" ".join(c) for c in linkemu.netem_commands(lay, inv.rtt_matrix(), bw) if "netem" in c]
    rated = [c for c in leaves if "rate" in c]
    # to cloud-a-1 (hxn0) from edge-a-1 (class 1:c), and to edge-a-1 (hxn2) from cloud-a-1 (class 1:a)
    assert rated == ["tc qdisc replace dev hxn0 parent 1:c handle c: netem delay 25ms rate 100mbit limit 100000",
                     "tc qdisc replace dev hxn2 parent 1:a handle a: netem delay 25ms rate 100mbit limit 100000"]
    assert len(leaves) == 7 * 6  # every other pair: delay only
    change = [" ".join(c) for c in linkemu.netem_change_commands(lay, "cloud-a-1", "edge-a-1", 80, bw)]
    assert all("delay 40ms rate 100mbit" in c for c in change)  # a latency change keeps the bandwidth
    assert linkemu.bandwidth_emulation("nfqueue", bw).startswith("not emulated")
    assert linkemu.bandwidth_emulation("netem", {}) is None


def test_delay_table_is_half_rtt_per_direction():
    inv = load_inventory()
    lay = layout_for(inv)
    table = linkemu.delay_table(lay, inv.rtt_matrix())
    assert table["10.230.1.1 10.230.1.3"] == 25.0  # cloud-a-1 -> edge-a-1
    assert table["10.230.1.3 10.230.1.7"] == 0.25  # edge-a-1 -> client-a-1
    assert len(table) == 7 * 6
