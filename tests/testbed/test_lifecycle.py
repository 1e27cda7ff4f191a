"""Pod lifecycle measured through the Cluster interface (``harness.testbed.lifecycle``), on a
simulated cluster whose pods take known times on a fake clock: what ``harness profile`` and
``harness calibrate`` record per node type. (The live check, on a real testbed, is root-only.)"""

from __future__ import annotations

import json

import pytest

from harness import profiling, shipped
from harness.scenarios import calibration
from harness.spec.app import load_app
from harness.spec.inventory import load_inventory
from harness.spec.profile import Profile
from harness.testbed import lifecycle
from harness.testbed.local import rtt
from harness.testbed.simulated import SimCluster, simulated_state

STATE = simulated_state(load_inventory(None))
READY = {"cloud-a": 1.0, "edge-a": 1.5, "edge-b": 2.5}  # seconds a pod takes to get ready, per node type
GONE = 0.4  # seconds a stopped pod holds its room


class FakeClock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t

    def until(self, t: float) -> None:
        self.t = max(self.t, t)

    def sleep(self, s: float) -> None:
        self.t += s


def timed_cluster() -> tuple[SimCluster, FakeClock]:
    clock = FakeClock()
    cluster = SimCluster(STATE, terminating_s=GONE)
    cluster.clock, cluster.sleep_until = clock, clock.until
    types = {n.name: n.type for n in STATE.nodes}
    cluster.start_s = lambda node: READY[types[node]]
    return cluster, clock


def test_each_pod_is_timed_alone_from_start_to_ready_and_from_stop_to_gone():
    cluster, clock = timed_cluster()
    app = load_app(shipped.workload("chain"))
    nodes = lifecycle.first_of_each_type(cluster)
    assert set(nodes) == set(READY)  # the client node runs no pods
    times = lifecycle.measure(cluster, app, nodes, clock=clock, sleep=clock.sleep)
    assert len(times) == len(app.services) * len(READY) and not cluster.pods() and not cluster.leaving()
    for t in times:
        assert t.ready_s == pytest.approx(READY[t.node_type])  # not the slowest pod started before it
        assert t.gone_s == pytest.approx(GONE, abs=0.06)  # polled every 50 ms
    summary = lifecycle.summarize(times)
    assert {k: v.ready_s for k, v in summary.items()} == pytest.approx(READY)
    assert all(v.samples == len(app.services) and v.ready_sd_s == 0 for v in summary.values())


def test_pods_started_together_on_a_node_share_its_cpu_to_get_ready():
    """Live, six pods healed at once on a 0.9-core node were ready after 2.8 s, one alone after 0.43 s."""
    cluster, clock = timed_cluster()
    cluster.set_app(load_app(shipped.workload("chain")))
    cloud = [n.name for n in cluster.nodes if n.type == "cloud-a"]
    edge = next(n.name for n in cluster.nodes if n.type == "edge-b")
    together = [cluster.start_pod("front-end", cloud[0]) for _ in range(6)]
    alone = [cluster.start_pod("ml", cloud[1]), cluster.start_pod("db", edge)]
    assert [cluster.ready_at(p) - clock.t for p in together] == pytest.approx([6 * READY["cloud-a"]] * 6)
    assert [cluster.ready_at(p) - clock.t for p in alone] == pytest.approx([READY["cloud-a"], READY["edge-b"]])
    clock.sleep(0.5)  # half of the second node's start done: a pod started now shares the rest
    late = cluster.start_pod("back-end", cloud[1])
    assert cluster.ready_at(alone[0]) - clock.t == pytest.approx(2 * 0.5)
    assert cluster.ready_at(late) - clock.t == pytest.approx(2 * 0.5 + (1.0 - 0.5))
    cluster.stop_pod(late)  # stopped before it was ready: it shares no more
    assert cluster.ready_at(alone[0]) - clock.t == pytest.approx(0.5)
    assert cluster.ready_at(together[0]) - clock.t == pytest.approx(6 * READY["cloud-a"] - 0.5)


def test_a_pod_that_never_gets_ready_is_removed_and_said():
    from harness.errors import TestbedError

    cluster, clock = timed_cluster()
    cluster.start_s = lambda node: 120.0
    cluster.set_app(load_app(shipped.workload("chain")))
    with pytest.raises(TestbedError, match="not ready after 60s"):
        lifecycle.timed_start(cluster, "ml", "edge-a-1", timeout=60, clock=clock)
    assert cluster.pods() == []


def test_harness_profile_records_the_lifecycle_per_node_type(monkeypatch):
    """profile_app on a simulated cluster (the cells' job times faked): the profile gains
    ``lifecycle`` per node type; a backend that measures no RTT spread leaves ``rtt_sd_ms`` out."""
    cluster, clock = timed_cluster()
    monkeypatch.setattr(lifecycle.time, "monotonic", clock)
    monkeypatch.setattr(lifecycle.time, "sleep", clock.sleep)
    monkeypatch.setattr(profiling, "internal_ms", lambda url: 10.0)
    app = load_app(shipped.workload("chain"))
    prof = profiling.profile_app(cluster, app, "test", requests=3, warmup=0)
    assert {t: round(v.ready_s, 3) for t, v in prof.lifecycle.items()} == READY
    assert all(v.gone_s == pytest.approx(GONE, abs=0.06) for v in prof.lifecycle.values())
    assert not cluster.pods() and prof.rtt_sd_ms == {}
    dumped = json.loads(prof.model_dump_json())
    assert "lifecycle" in dumped and "rtt_sd_ms" not in dumped  # an empty new field is not written
    assert Profile.model_validate(dumped).lifecycle == prof.lifecycle


def test_calibrate_times_pods_and_keeps_what_it_timed(tmp_path, monkeypatch):
    cluster, clock = timed_cluster()
    monkeypatch.setattr(lifecycle.time, "monotonic", clock)
    monkeypatch.setattr(lifecycle.time, "sleep", clock.sleep)
    app = load_app(shipped.workload("chain"))
    pods, spread = calibration.pods_and_links(cluster, app, tmp_path)
    assert {t: v.ready_s for t, v in pods.items()} == pytest.approx(READY) and spread == {}
    rows = (tmp_path / calibration.LIFECYCLE).read_text().splitlines()
    assert rows[0] == ",".join(lifecycle.FIELDS) and len(rows) == 1 + len(app.services) * len(READY)


def test_the_spread_of_a_links_pings_is_their_standard_deviation(monkeypatch):
    """The local backend's jitter: the pings' standard deviation, the first ping (ARP) left out."""
    import subprocess

    out = "\n".join(f"64 bytes from 10.0.0.2: icmp_seq={i} ttl=64 time={ms} ms"
                    for i, ms in enumerate([90.0, 50.0, 52.0, 48.0, 50.0]))
    monkeypatch.setattr(rtt.subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 0, out, ""))
    assert rtt.ping_ms("ns", "10.0.0.2", count=5) == 50.0
    assert rtt.ping_ms("ns", "10.0.0.2", count=5, stat=rtt.spread) == pytest.approx(1.414, abs=1e-3)
    assert rtt.spread([7.0]) == 0.0
