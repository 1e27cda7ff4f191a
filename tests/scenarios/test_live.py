"""harness run on the real local testbed: Locust in the client node, a node failure and a crashed
pod on schedule, self-healing, a learned rescheduler and a heuristic, every artefact written;
Ctrl-C keeps the results and leaves the testbed clean."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pandas as pd
import pytest
import yaml

from harness import errors
from harness.loadgen import UNFINISHED
from harness.testbed.local import daemons
from harness.testbed.pods import deploy, move_pod, undeploy
from tests.conftest import REPO

pytestmark = [pytest.mark.root, pytest.mark.slow]

SCENARIO = {
    "name": "test-failure", "description": "short node failure and pod crash", "duration_s": 30, "app": "chain",
    "replicas": 2, "warmup_s": 3,
    "faults": [{"at_s": 10, "kind": "node-failure", "node_types": ["edge-a", "cloud-a"]},
               {"at_s": 20, "kind": "pod-kill", "service": "db"}],
    "rescheduler": {"period_s": 5, "start_s": 2, "max_moves": 4},
}
ARTEFACTS = ["inputs/app.json", "inputs/scenario.yaml", "inputs/testbed.yaml", "inputs/profile.json", "inputs/policy.json",
             "inputs/harness.json", "requests.csv", "events.csv", "placements.jsonl", "metrics.csv", "summary.json",
             "locust_stats.csv", "locust_stats_history.csv", "locust_failures.csv", "locust_exceptions.csv",
             "locust_report.html", "prometheus.json"]


def harness(state_dir: Path, *args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", "--state-dir", str(state_dir), *args], cwd=REPO,
                          capture_output=True, text=True, **kw)


@pytest.fixture(scope="module")
def reach_model(tmp_path_factory):
    """A briefly trained REACH model: enough to exercise the live loop, not to judge REACH."""
    out = tmp_path_factory.mktemp("models")
    r = subprocess.run([sys.executable, "-m", "harness", "train", "--app", "workloads/chain.json", "--profile",
                        "profiles/chain.reach-local.json", "--policy", "reach", "--steps", "2048", "--out", str(out)],
                       cwd=REPO, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return out


@pytest.fixture
def testbed(local_testbed):
    yield local_testbed
    c = local_testbed.cluster
    undeploy(c)
    for n in c.nodes:
        if not c.node_up(n.name):
            c.recover_node(n.name)


def assert_clean(cluster):
    assert cluster.pods() == []
    assert cluster.leaving() == []  # nothing withdrawn and left running by a move cut short
    assert all(cluster.node_up(n.name) for n in cluster.nodes)


def test_node_failure_run_with_reach_and_cloud_first(testbed, reach_model, tmp_path):
    sc = tmp_path / "sc.yaml"
    sc.write_text(yaml.safe_dump(SCENARIO))
    r = harness(testbed.state_dir, "run", str(sc), "--policy", "reach,cloud-first", "--model-dir", str(reach_model),
                "--out", str(tmp_path / "results"), "--seed", "1", timeout=400)
    assert r.returncode == 0, r.stderr[-3000:]
    (session,) = (tmp_path / "results").iterdir()
    comparison = pd.read_csv(session / "comparison.csv")
    assert list(comparison.policy) == ["reach", "cloud-first"]
    for policy in ("reach", "cloud-first"):
        run = session / f"{policy}-s1"
        for f in ARTEFACTS:
            assert (run / f).exists(), f"{run.name}: {f} missing"
        s = json.loads((run / "summary.json").read_text())
        assert not s["partial"]
        # Prometheus's series of the run, kept past the testbed: every pod's request counter, second by second
        series = json.loads((run / "prometheus.json").read_text())["result"]
        counters = [x for x in series if x["metric"]["__name__"] == "mub_request_processing_latency_milliseconds_count"]
        # one per pod that served (moves and restarts make new ones); a pod that lived through the run: every second
        assert len(counters) >= 4 and max(len(x["values"]) for x in counters) >= 25
        assert not any(x["metric"]["__name__"].endswith("_bucket") for x in series)
        # faults on time, the failed node's pods serving again quickly, no failure in steady state
        assert [f["kind"] for f in s["faults"]] == ["node-failure", "pod-kill"]
        assert all(abs(f["late_s"]) <= 1.0 for f in s["faults"]), s["faults"]
        assert s["recovery_s"] is not None and s["recovery_s"] <= 10, s["faults"]
        assert s["steady_state_errors"] == 0
        # the summary is the request log's: recompute it
        req = pd.read_csv(run / "requests.csv", keep_default_na=False)
        events = pd.read_csv(run / "events.csv", keep_default_na=False)
        t0 = events[events.kind == "load-start"].t.iloc[0]
        sent = req[(req.t_send >= t0 + SCENARIO["warmup_s"]) & (req.t_send <= t0 + SCENARIO["duration_s"])]
        unfinished = sent.error == UNFINISHED  # the user's request the end cut short: accounted for, no result
        window = sent[~unfinished]
        ok = window[(window.status == 200) & (window.error == "")]
        assert s["requests"] == len(window) and s["errors"] == len(window) - len(ok)
        assert s["sent"] == len(sent) and s["unfinished"] == int(unfinished.sum()) <= 1 and s["kept_up"]
        assert abs(s["mean_ms"] - ok.latency_ms.mean()) < 0.01
        # the load generator was never the limit: sends follow replies at once (Little's law)
        assert s["loadgen"]["efficiency"] > 0.9 and s["loadgen"]["cpu_share"] < 0.5
        kinds = set(events.kind)
        assert {"deploy", "load-start", "node-failure", "healed", "pod-kill", "pod-crashed", "restarted"} <= kinds
        # every host-speed sample of the summary is an event with its time, in order (a replay follows them)
        host = events[events.kind == "host-speed"]
        assert [json.loads(d)["cpu_ms"] for d in host.detail] == s["host_reference_ms"] and len(host) >= 3
        assert host.t.is_monotonic_increasing
        # requests after self-healing reach every service again: all succeed in the last 5 s
        tail = req[(req.t_send >= t0 + SCENARIO["duration_s"] - 5) & (req.error != UNFINISHED)]
        assert len(tail) > 5 and (tail.status == 200).all()
        placements = [json.loads(line) for line in (run / "placements.jsonl").read_text().splitlines()]
        assert placements[0]["reason"] == "deploy" and placements[0]["predicted_ms"] > 0
    reach = json.loads((session / "reach-s1" / "summary.json").read_text())
    assert reach["moves"] == sum(1 for _ in open(session / "reach-s1" / "events.csv") if ",move," in _)
    assert json.loads((session / "cloud-first-s1" / "summary.json").read_text())["moves"] == 0  # heuristics only place
    assert_clean(testbed.cluster)
    assert daemons.alive(int((testbed.state_dir / "run" / "delayer.pid").read_text()))


def test_ctrl_c_keeps_results_and_leaves_the_testbed_clean(testbed, tmp_path):
    sc = tmp_path / "sc.yaml"
    sc.write_text(yaml.safe_dump({**SCENARIO, "duration_s": 120, "faults": [SCENARIO["faults"][0] | {"at_s": 4}]}))
    p = subprocess.Popen([sys.executable, "-m", "harness", "--state-dir", str(testbed.state_dir), "run", str(sc),
                          "--policy", "default", "--out", str(tmp_path / "results")], cwd=REPO,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 90
        events = None
        while time.monotonic() < deadline:
            found = list((tmp_path / "results").glob("*/default-s0/events.csv"))
            if found and "healed" in found[0].read_text():
                events = found[0]
                break
            time.sleep(0.5)
        assert events, "the run never got to its node failure"
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130, err[-2000:]
    s = json.loads((events.parent / "summary.json").read_text())
    assert s["partial"] and s["requests"] > 0
    assert_clean(testbed.cluster)


def test_missing_model_names_the_train_command(testbed, tmp_path):
    r = harness(testbed.state_dir, "run", "node-failure", "--policy", "reach", "--model-dir", str(tmp_path))
    assert r.returncode == 2
    line = r.stderr.strip()
    assert "\n" not in line and "harness train --app" in line and "--policy reach" in line


def test_a_move_to_a_node_that_cannot_start_it_leaves_the_old_pod_serving(testbed):
    from harness.spec.app import load_app

    c = testbed.cluster
    app = load_app(REPO / "workloads" / "chain.json")
    placement = {s: ["cloud-a-1"] for s in app.services}
    deploy(c, app, placement)
    (db,) = [p for p in c.pods() if p.service == "db"]
    c.fail_node("edge-b-1")
    with pytest.raises(errors.TestbedError):
        move_pod(c, db, "edge-b-1")
    assert [p.name for p in c.pods() if p.service == "db"] == [db.name]
    with urllib.request.urlopen(f"http://{db.endpoint}/api/v1", timeout=10) as r:
        assert r.status == 200
    assert os.path.exists(c.endpoints_file) and db.endpoint in c.endpoints_file.read_text()


def test_autoscaler_adds_replicas_under_load(testbed, tmp_path):
    sc = tmp_path / "surge.yaml"
    sc.write_text(yaml.safe_dump({
        "name": "test-surge", "description": "HPA under a short surge", "duration_s": 30, "app": "chain", "replicas": 1,
        "warmup_s": 2, "load": {"mode": "closed", "steps": [{"at_s": 0, "value": 1}, {"at_s": 5, "value": 4}]},
        "autoscaling": {"enabled": True, "target_cpu": 0.5, "max_replicas": 3, "period_s": 5, "window": "5s"},
        "rescheduler": {"period_s": 30, "start_s": 30, "max_moves": 0}}))
    r = harness(testbed.state_dir, "run", str(sc), "--policy", "default", "--out", str(tmp_path / "results"), timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    (run,) = (tmp_path / "results").glob("*/default-s0")
    events = pd.read_csv(run / "events.csv", keep_default_na=False)
    scale = [json.loads(d) for d in events[events.kind == "scale"].detail]
    assert scale and all(e["to"] > e["current"] for e in scale)  # up, never down within the stabilisation window
    last = [json.loads(line) for line in (run / "placements.jsonl").read_text().splitlines()][-1]
    assert sum(len(v) for v in last["placement"].values()) > 4  # more than one replica of some service
    assert json.loads((run / "summary.json").read_text())["scale_events"] == len(scale)
    assert_clean(testbed.cluster)
