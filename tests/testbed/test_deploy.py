"""Apps on the real local testbed: deploy, requests from the client node, make-before-break."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from harness.spec.app import load_app
from harness.spec.placement import spread_placement
from harness.testbed.pods import deploy, move_pod, undeploy
from tests.conftest import REPO

pytestmark = [pytest.mark.root, pytest.mark.slow, pytest.mark.load_tolerant]  # statuses; latency above its RTTs, below 600 ms
CLIENT = str(Path(__file__).with_name("data") / "closed_loop.py")
SPANNING = {"front-end": ["edge-a-1"], "ml": ["cloud-a-1"], "back-end": ["edge-b-1"], "db": ["cloud-a-2"]}


@pytest.fixture
def cluster(local_testbed):
    c = local_testbed.cluster
    yield c
    undeploy(c)


def network_floor_ms(cluster, app, placement: dict[str, list[str]], client: str = "client-a-1") -> float:
    """The emulated RTTs alone on a request's fastest possible path (μBench: a service's groups in
    parallel, a group's calls one after another): the links' part, which no host speed shortens."""
    rtt = cluster.rtt_configured()

    def below(s: str) -> float:
        node = placement[s][0]
        return max((sum(sorted(rtt[node][placement[c][0]] + below(c) for c in g.services)[:g.seq_len])
                    for g in app.services[s].external_services), default=0.0)

    return rtt[client][placement[app.gateway][0]] + below(app.gateway)


def requests_from_client(cluster, app, count: int) -> dict:
    url = f"http://{cluster.endpoints(app.gateway)[0]}/api/v1"
    r = cluster.run_in_node("client-a-1", [sys.executable, CLIENT, url, "--count", str(count)], timeout=180)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_mubench_workmodel_deploys_unchanged(cluster):
    app = load_app(REPO / "workloads/mubench-workmodel.json")
    pods = deploy(cluster, app, spread_placement(app, [(n.name, n.tier, n.cpus) for n in cluster.nodes]))
    assert {p.service for p in pods} == {"s0", "s1", "s2", "s3"}
    assert all(cluster.node(p.node).tier != "client" for p in pods)
    out = requests_from_client(cluster, app, 20)
    assert out["statuses"] == [200] * 20


def test_mubench_generator_default_workmodel_serves_100_requests(cluster):
    # finding 8: μBench's WorkModelGenerator with its default configuration gives s0 colosseum
    app = load_app(REPO / "tests/data/mubench/generator-default-workmodel.json")
    pods = deploy(cluster, app, spread_placement(app, [(n.name, n.tier, n.cpus) for n in cluster.nodes]))
    assert {p.service for p in pods} == {"s0", "s1", "sdb1"}
    out = requests_from_client(cluster, app, 100)
    assert out["statuses"] == [200] * 100


@pytest.mark.parametrize("name", ["chain", "aggregator-sequential", "aggregator-parallel"])
def test_100_requests_through_each_reach_app_across_cloud_and_edge(cluster, name):
    app = load_app(REPO / f"workloads/{name}.json")
    pods = deploy(cluster, app, SPANNING)
    assert {cluster.node(p.node).tier for p in pods} == {"cloud", "edge"}
    out = requests_from_client(cluster, app, 100)
    assert out["statuses"] == [200] * 100
    mean = sum(out["latency_ms"]) / 100
    # above the links' RTTs (the services' CPU work, the rest of REACH's 100-600 ms, shrinks on a fast host)
    assert network_floor_ms(cluster, app, SPANNING) < mean < 600, mean


def test_move_pod_make_before_break_under_load_loses_no_request(cluster, tmp_path):
    app = load_app(REPO / "workloads/chain.json")
    deploy(cluster, app, SPANNING)
    ml = next(p for p in cluster.pods() if p.service == "ml")
    url = f"http://{cluster.endpoints(app.gateway)[0]}/api/v1"
    stop = tmp_path / "stop"
    user = cluster.start_process("client-a-1", [sys.executable, CLIENT, url, "--count", "100000",
                                                "--stop-file", str(stop), "--max-seconds", "60"],
                                 log=tmp_path / "user.json")
    try:
        time.sleep(1.5)
        moved = move_pod(cluster, ml, "edge-a-2")
        assert moved.node == "edge-a-2" and moved.name != ml.name
        assert [p.node for p in cluster.pods() if p.service == "ml"] == ["edge-a-2"]
        time.sleep(1.5)
    finally:
        stop.touch()
        user.wait(30)
    out = json.loads((tmp_path / "user.json").read_text())
    assert len(out["statuses"]) > 5
    assert out["statuses"] == [200] * len(out["statuses"])
    assert not Path(f"/proc/{ml.pid}").exists() or "Z" in Path(f"/proc/{ml.pid}/stat").read_text().split(") ")[1][:1]


def test_fail_node_drops_its_pods_from_the_endpoints(cluster):
    app = load_app(REPO / "workloads/chain.json")
    deploy(cluster, app, {**SPANNING, "db": ["cloud-a-2", "edge-a-2"]})
    try:
        lost = cluster.fail_node("edge-a-2")
        assert [p.service for p in lost] == ["db"]
        assert len(cluster.endpoints("db")) == 1
        out = requests_from_client(cluster, app, 10)
        assert out["statuses"] == [200] * 10  # the surviving replica serves
    finally:
        cluster.recover_node("edge-a-2")
