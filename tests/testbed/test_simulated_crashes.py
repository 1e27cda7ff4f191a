"""The simulated cluster lists its crashed pods without asking every pod: the same pods the
Cluster interface's rule (a dead process on a node that is up) gives."""

from __future__ import annotations

from harness.spec.app import load_app
from harness.spec.inventory import load_inventory
from harness.testbed.cluster import Cluster
from harness.testbed.simulated import SimCluster, simulated_state
from tests.conftest import REPO


def test_crashed_pods_are_the_dead_ones_on_nodes_up():
    cluster = SimCluster(simulated_state(load_inventory(None)))
    cluster.set_app(load_app(REPO / "workloads/chain.json"))
    hosts = [n.name for n in cluster.nodes if n.role != "client"]
    pods = [cluster.start_pod(s, hosts[i % len(hosts)]) for i, s in enumerate(["front-end", "ml", "back-end", "db"] * 2)]
    assert cluster.crashed_pods() == []
    cluster.kill_pod(pods[1])
    cluster.kill_pod(pods[6])
    cluster.fail_node(pods[6].node)  # its pods are lost with the node, not crashed
    assert cluster.crashed_pods() == [pods[1]] == Cluster.crashed_pods(cluster)
