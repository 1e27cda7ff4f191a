"""A simulated pod stopped twice (a move's stop, then undeploy's) holds its node's room once."""

from __future__ import annotations

from harness.spec.app import load_app
from harness.spec.inventory import load_inventory
from harness.testbed.pods import undeploy
from harness.testbed.simulated import SimCluster, simulated_state
from tests.conftest import REPO


def test_a_terminating_pod_stopped_again_is_listed_once_and_undeploy_stops_the_retired():
    cluster = SimCluster(simulated_state(load_inventory(None)), terminating_s=30.0)
    cluster.set_app(load_app(REPO / "workloads/chain.json"))
    host = next(n.name for n in cluster.nodes if n.role != "client")
    pods = [cluster.start_pod(s, host) for s in ("front-end", "ml", "back-end", "db")]
    cluster.retire_pod(pods[0])
    cluster.stop_pod(pods[0])
    cluster.stop_pod(pods[0])
    assert [p.name for p in cluster.leaving()] == [pods[0].name]
    cluster.retire_pod(pods[1])  # withdrawn, its stop never came
    assert undeploy(cluster) == 4  # every pod it found, the one already terminating too
    assert cluster.pods() == []
    assert sorted(p.name for p in cluster.leaving()) == sorted(p.name for p in pods)
