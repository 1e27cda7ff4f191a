"""Fault kinds on the real local testbed: a CPU hog slows the pods of its node; the latency shift,
a node failure and its recovery are played, followed and undone."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import yaml

from harness.scenarios.catalog import load_scenario
from tests.scenarios.test_live import assert_clean, harness, testbed  # noqa: F401  (the fixture)

pytestmark = [pytest.mark.root, pytest.mark.slow]


def run_one(testbed, tmp_path, doc: dict, policy: str) -> tuple:
    sc = tmp_path / "sc.yaml"
    sc.write_text(yaml.safe_dump(doc))
    r = harness(testbed.state_dir, "run", str(sc), "--policy", policy, "--out", str(tmp_path / "results"), timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    (run,) = (tmp_path / "results").glob(f"*/{policy}-s0")
    events = pd.read_csv(run / "events.csv", keep_default_na=False)
    req = pd.read_csv(run / "requests.csv", keep_default_na=False)
    return run, events, req


def test_a_cpu_hog_slows_the_pods_on_its_node(testbed, tmp_path):
    # cloud-first puts the four services on the two cloud nodes; the hog takes cloud-a-1's CPU
    doc = {"name": "hog", "description": "a noisy neighbour on a cloud node", "duration_s": 26, "app": "chain",
           "replicas": 1, "warmup_s": 2, "rescheduler": {"period_s": 30, "start_s": 30, "max_moves": 0},
           "faults": [{"at_s": 10, "kind": "cpu-hog", "node": "cloud-a-1", "workers": 3, "duration_s": 10}]}
    run, events, req = run_one(testbed, tmp_path, doc, "cloud-first")
    t0 = events[events.kind == "load-start"].t.iloc[0]
    hog = events[events.kind == "cpu-hog"]
    assert len(hog) == 1
    detail = json.loads(hog.detail.iloc[0])
    assert detail["node"] == "cloud-a-1" and len(detail["pids"]) == 3 and detail["window_s"] == 0
    placement = json.loads((run / "placements.jsonl").read_text().splitlines()[0])["placement"]
    assert "cloud-a-1" in {n for nodes in placement.values() for n in nodes}
    ok = req[(req.status == 200) & (req.error == "")]
    before = ok[(ok.t_send >= t0 + 2) & (ok.t_send < t0 + 10)].latency_ms.mean()
    during = ok[(ok.t_send >= t0 + 11) & (ok.t_send < t0 + 19)].latency_ms.mean()
    after = ok[(ok.t_send >= t0 + 21)].latency_ms.mean()
    assert during > 1.2 * before, (before, during)
    assert after < during  # the hog stops by itself after duration_s
    assert json.loads((run / "summary.json").read_text())["faults"][0]["kind"] == "cpu-hog"
    assert_clean(testbed.cluster)


def test_latency_shift_node_failure_and_recovery_are_followed_and_undone(testbed, tmp_path):
    doc = yaml.safe_load(open(load_scenario("latency-shift")[1]))  # the built-in, shortened
    doc.update(duration_s=24, replicas=2, warmup_s=2)
    doc["faults"] = [doc["faults"][0] | {"at_s": 4},
                     {"at_s": 8, "kind": "node-failure", "nodes": ["edge-a-1"]},
                     {"at_s": 14, "kind": "node-recovery", "node_types": ["edge-a"]}]
    rtt_before = testbed.cluster.rtt_configured()
    run, events, req = run_one(testbed, tmp_path, doc, "default")
    kinds = list(events.kind)
    for k in ("latency", "node-failure", "healed", "node-recovery"):
        assert k in kinds, kinds
    lat = json.loads(events[events.kind == "latency"].detail.iloc[0])
    assert lat["rtt_ms"] == 100 and lat["pairs"] == 8  # 2 cloud x 4 edge nodes
    recovered = json.loads(events[events.kind == "node-recovery"].detail.iloc[0])
    assert recovered["nodes"] == ["edge-a-1"]  # the failed one of its type, not the other
    placements = [json.loads(line) for line in (run / "placements.jsonl").read_text().splitlines()]
    reasons = [p["reason"] for p in placements]
    assert "latency" in reasons and "node-failure" in reasons
    deploy = placements[0]
    relearned = next(p for p in placements if p["reason"] == "latency")
    assert relearned["placement"] == deploy["placement"]
    assert relearned["predicted_ms"] > deploy["predicted_ms"]  # the model sees the slower links
    s = json.loads((run / "summary.json").read_text())
    assert [f["kind"] for f in s["faults"]] == ["latency", "node-failure", "node-recovery"]
    assert s["recovery_s"] is not None and s["steady_state_errors"] == 0
    assert testbed.cluster.rtt_configured() == rtt_before  # undone at clean-up
    assert_clean(testbed.cluster)
