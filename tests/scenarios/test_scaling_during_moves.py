"""The autoscaler and the move loop share one lock: a scaling decision never counts a move's two
pods (its new one started beside the old one). Read mid-move, the HPA once scaled a service down
and stopped the move's new pod, leaving one replica too few (found in a traffic-surge run)."""

from __future__ import annotations

import threading
import time

import pytest

from harness import errors
from harness.scenarios.run import RunBase
from harness.testbed.pods import GRACE_S, Pod


class FakePods:
    """A fake cluster's pod list, only what scale_to touches (the live testbed's semantics:
    retired pods are no longer listed)."""

    def __init__(self, pods: list[Pod]):
        self.listed, self.stopped, self.published, self.stopped_at = list(pods), [], [], []

    def pods(self):
        return list(self.listed)

    def retire_pod(self, pod):
        self.listed.remove(pod)

    def publish(self):
        self.published.append(time.monotonic())

    def pause(self, seconds: float):
        time.sleep(seconds)

    def stop_pod(self, pod, drain_seconds: float = 10):
        self.stopped.append(pod)
        self.stopped_at.append(time.monotonic())


def pod(name: str, node: str = "edge-a-1") -> Pod:
    return Pod(name, "ml", node, "10.0.0.1", 8080)


class Stub:
    """The parts of a run (RunBase) that scale_to uses."""

    def __init__(self, cluster):
        self.cluster, self.lock, self.events = cluster, threading.Lock(), []

    def event(self, kind, **detail):
        self.events.append((kind, detail))


def test_a_scaling_decision_waits_for_a_move_in_progress_and_keeps_its_new_pod():
    old, other, new = pod("ml-1"), pod("ml-2"), pod("ml-3", "edge-a-2")
    cluster = FakePods([old, other])
    run = Stub(cluster)
    run.lock.acquire()  # a move is under way: its new pod runs beside the old one
    cluster.listed.append(new)
    seen = []

    def hpa(mine):  # the HPA keeps 2 replicas: a count of 3 would make it scale down
        seen.append(len(mine))
        return 2, {"utilisation": 0.5}

    t = threading.Thread(target=lambda: seen.append(RunBase.scale_to(run, {"ml": hpa})))
    t.start()
    time.sleep(0.2)
    assert seen == []  # no decision while the move holds the lock
    cluster.retire_pod(old)  # the move ends: the old pod goes
    run.lock.release()
    t.join(5)
    assert seen == [2, []]  # decided on the pods after the move: nothing to do
    assert cluster.pods() == [other, new] and cluster.stopped == [] and run.events == []


def test_a_scale_down_stops_the_newest_pods_of_the_most_crowded_node_first():
    """Kubernetes' ReplicaSet order: pods on the node holding most of the service's, then the newest."""
    pods = [pod("ml-1", "edge-a-1"), pod("ml-2", "edge-b-1"), pod("ml-3", "edge-a-1"), pod("ml-4", "edge-b-2"),
            pod("ml-5", "edge-b-1"), pod("ml-6", "edge-a-1")]
    cluster = FakePods(pods)
    run = Stub(cluster)
    assert RunBase.scale_to(run, {"ml": lambda mine: (3, {"reason": "schedule"})}) == ["ml"]
    assert cluster.stopped == [pods[5], pods[2], pods[0]]  # edge-a-1's three (ranked by the counts before), newest first
    assert [p.name for p in cluster.pods()] == ["ml-2", "ml-4", "ml-5"]
    assert run.events == [("scale", {"service": "ml", "to": 3, "current": 6, "reason": "schedule"})]


def test_a_scale_down_stops_pods_only_after_the_grace_for_requests_already_routed_to_them():
    """A live 1.3_0.4 run lost a request sent 2 ms after a scale-down: the pod was stopped as soon
    as it left the endpoints, before a pick made just before the change had reached it."""
    pods = [pod(f"ml-{i}") for i in range(1, 4)]
    cluster = FakePods(pods)
    assert RunBase.scale_to(Stub(cluster), {"ml": lambda mine: (1, {"reason": "schedule"})})
    assert len(cluster.published) == 1 and len(cluster.stopped) == 2
    assert min(cluster.stopped_at) - cluster.published[0] >= GRACE_S


def test_a_failed_scale_up_still_stops_the_pods_the_same_decision_withdrew():
    """Out of the endpoints and never stopped, they would hold their node's room to the run's end."""
    pods = [pod("ml-1"), pod("ml-2")]
    cluster = FakePods(pods)
    run = Stub(cluster)

    def no_room(services, why):
        raise errors.TestbedError("no node has room")

    run.place_new = no_room
    with pytest.raises(errors.TestbedError):
        RunBase.scale_to(run, {"ml": lambda mine: (1, {}), "db": lambda mine: (1, {})})
    assert cluster.stopped == [pods[1]] and cluster.pods() == [pods[0]]
