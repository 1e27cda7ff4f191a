"""The local testbed for real: namespaces, cgroups, the latency injector, node failure.

One REACH-sized testbed is provisioned per session through playbooks/local.yml (see conftest)."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from harness.errors import UserError
from harness.testbed.local import cgroups
from harness.testbed.local.rtt import ping_ms
from harness.testbed.speed import speed_ratios

pytestmark = [pytest.mark.root, pytest.mark.slow, pytest.mark.host_timing]  # CPU shares, RTTs (also at provisioning)


def test_measured_rtt_matches_configured(local_testbed):
    state = local_testbed.cluster.state
    conf, meas = state.rtt_configured_ms, state.rtt_measured_ms
    pairs = [(a, b) for a in conf for b in conf if a < b]
    assert len(pairs) == 21
    for a, b in pairs:
        assert meas[a][b] is not None, f"{a}->{b} unreachable"
        tol = max(2.0, 0.10 * conf[a][b])
        assert abs(meas[a][b] - conf[a][b]) <= tol, f"{a}-{b}: measured {meas[a][b]} vs configured {conf[a][b]}"


def test_cpu_bound_job_runs_at_configured_relative_speed(local_testbed):
    res = speed_ratios(local_testbed.cluster, rounds=5)
    assert res["cloud-a"]["slowdown"] == 1.0
    assert res["edge-a"]["slowdown"] == pytest.approx(1.5, rel=0.10), res
    assert res["edge-b"]["slowdown"] == pytest.approx(2.0, rel=0.10), res
    assert res["edge-a"]["expected"] == pytest.approx(1.5, rel=1e-3)
    # the share is the cgroup's bandwidth itself: fastest_node_cpus * speed / fastest speed
    cores = local_testbed.inventory.local.fastest_node_cpus
    assert res["edge-b"]["share"] == pytest.approx(cores / 2, rel=0.10), res


def test_second_provision_changes_nothing(local_testbed):
    from harness.testbed.local.provision import provision

    assert local_testbed.first_run.changed > 0
    _, again = provision(local_testbed.inventory, local_testbed.state_dir, measure=False)
    assert again.counts["changed"] == 0 and again.counts["failed"] == 0
    assert again.counts["ok"] >= len(local_testbed.inventory.nodes) * 2


def test_provision_with_another_inventory_asks_for_teardown(local_testbed):
    from harness.testbed.local.provision import provision

    other = local_testbed.inventory.model_copy(deep=True)
    other.rtt_ms["cloud-edge"] = 80
    with pytest.raises(UserError, match="harness teardown"):
        provision(other, local_testbed.state_dir)


def test_process_runs_inside_node_namespace_and_cgroup(local_testbed):
    c = local_testbed.cluster
    node = c.node("edge-b-1")
    r = c.run_in_node("edge-b-1", ["ip", "-4", "-o", "addr", "show", "dev", "eth0"])
    assert node.address in r.stdout
    p = c.start_process("edge-b-1", ["sleep", "30"])
    try:
        deadline = time.monotonic() + 5
        while p.pid not in cgroups.pids(c.node_cgroup("edge-b-1")) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert p.pid in cgroups.pids(c.node_cgroup("edge-b-1"))

        def ns_pids() -> list[str]:
            return subprocess.run(["ip", "netns", "pids", f"{c.layout.prefix}-edge-b-1"], capture_output=True,
                                  text=True).stdout.split()

        # the cgroup is joined first, then `ip netns exec` enters the namespace: on a busy host a moment later
        while str(p.pid) not in ns_pids() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert str(p.pid) in ns_pids()
    finally:
        p.kill()
        p.wait(5)


def test_fail_node_kills_its_processes_and_cuts_its_links_until_recovered(local_testbed):
    c = local_testbed.cluster
    lay = c.layout
    victim, peer = lay.node("edge-a-2"), lay.node("edge-a-1")
    p = c.start_process("edge-a-2", ["sleep", "60"])
    try:
        c.fail_node("edge-a-2")
        assert p.wait(5) != 0  # killed
        assert not c.node_up("edge-a-2")
        assert ping_ms(peer.netns, victim.address, count=2, timeout_s=1) is None
        with pytest.raises(Exception, match="down"):
            c.start_process("edge-a-2", ["true"])
    finally:
        c.recover_node("edge-a-2")
    assert c.node_up("edge-a-2")
    assert ping_ms(peer.netns, victim.address, count=3) is not None
    assert ping_ms(lay.node("cloud-a-1").netns, victim.address, count=3) == pytest.approx(50, abs=5)


def test_set_latency_changes_rtt_while_running(local_testbed):
    c = local_testbed.cluster
    lay = c.layout
    a, b = lay.node("cloud-a-2"), lay.node("edge-b-2")
    try:
        c.set_latency("cloud-a-2", "edge-b-2", 20)
        # the floor: the delay itself, without what a busy host adds to some pings
        assert ping_ms(a.netns, b.address, stat=min) == pytest.approx(20, abs=2)
        assert ping_ms(b.netns, a.address, stat=min) == pytest.approx(20, abs=2)
        assert c.rtt_configured()["edge-b-2"]["cloud-a-2"] == 20
        # other pairs keep theirs
        assert ping_ms(lay.node("cloud-a-1").netns, b.address) == pytest.approx(50, abs=5)
    finally:
        c.set_latency("cloud-a-2", "edge-b-2", 50)
    assert ping_ms(a.netns, b.address) == pytest.approx(50, abs=5)


def test_harness_traffic_to_nodes_is_not_delayed(local_testbed):
    lay = local_testbed.cluster.layout
    out = subprocess.run(["ping", "-n", "-c", "4", "-i", "0.05", lay.node("cloud-a-1").address],
                         capture_output=True, text=True).stdout
    times = [float(x.split("time=")[1].split()[0]) for x in out.splitlines() if "time=" in x]
    assert times and max(times[1:]) < 5


def test_status_json_reports_nodes_and_matrices(local_testbed):
    import json

    r = subprocess.run([sys.executable, "-m", "harness", "--state-dir", str(local_testbed.state_dir),
                        "status", "--json"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["backend"] == "local" and doc["latency_injector"] in ("netem", "nfqueue")
    assert {n["name"] for n in doc["nodes"]} == {n.name for n in local_testbed.inventory.nodes}
    assert all(n["up"] for n in doc["nodes"])
    assert doc["rtt_configured_ms"]["cloud-a-1"]["edge-a-1"] == 50
    assert 45 < doc["rtt_measured_ms"]["cloud-a-1"]["edge-a-1"] < 55


def test_netem_tree_is_accepted_by_the_kernel_and_classifies_by_source(local_testbed):
    """This kernel has no sch_netem, but the rest of the tree (htb classes, u32 filters on the
    source address) is real: apply it with a pfifo leaf instead of netem and check that pings
    from cloud-a-1 to edge-b-1 are counted in cloud-a-1's class on edge-b-1's hub link."""
    from harness.testbed.local import linkemu
    from harness.testbed.local.sh import in_netns, run

    c = local_testbed.cluster
    lay = c.layout
    dst, src = lay.node("edge-b-1"), lay.node("cloud-a-1")
    cmds = [cmd for cmd in linkemu.netem_commands(lay, c.rtt_configured()) if dst.hub_veth in cmd]
    try:
        for cmd in cmds:
            if "netem" in cmd:
                cmd = cmd[: cmd.index("netem")] + ["pfifo", "limit", "1000"]
            run(in_netns(lay.hub_netns, cmd))
        assert ping_ms(src.netns, dst.address, count=5) is not None
        stats = run(in_netns(lay.hub_netns, ["tc", "-s", "class", "show", "dev", dst.hub_veth])).stdout
        block = stats.split(f"class htb {linkemu._class_id(src.index)} ")[1].split("class htb")[0]
        sent_packets = int(block.split(" pkt")[0].split()[-1])
        assert sent_packets >= 5, stats
    finally:
        run(in_netns(lay.hub_netns, ["tc", "qdisc", "del", "dev", dst.hub_veth, "root"]), check=False)


def test_a_pod_alive_on_a_node_whose_link_is_cut_is_not_waited_for(local_testbed):
    # the race a live run met: a move's pod started between a failing node's kill and its link
    # cut lived on, unreachable; the move waited its 30 s holding the lock self-healing needed
    from harness.spec.app import load_app
    from harness.testbed.local import network
    from tests.conftest import REPO

    c = local_testbed.cluster
    c.set_app(load_app(REPO / "workloads/chain.json"))
    node = next(n.name for n in c.nodes if n.tier == "edge")
    pod = c.start_pod("back-end", node)
    layout_node = c._layout_node(node)
    network.set_node_link(c.layout, layout_node, up=False)
    try:
        t = time.monotonic()
        with pytest.raises(Exception, match="down"):
            c.wait_ready(pod, 20)
        assert time.monotonic() - t < 5
    finally:
        c.stop_pod(pod, drain_seconds=0)
        network.set_node_link(c.layout, layout_node, up=True)
    assert c.node_up(node)
