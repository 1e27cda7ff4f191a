"""Richer live runs: two apps with their own entries and loads; deployment requests that come and
go; the scenario files that use the new shapes load."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import yaml

from harness.errors import UserError
from harness.scenarios.catalog import builtin_names, load_scenario
from harness.spec.app import compose, load_app
from tests.conftest import REPO
from tests.scenarios.test_live import assert_clean, harness, testbed  # noqa: F401  (the fixture)


def test_the_new_builtin_scenarios_load():
    assert {"two-apps", "replica-cycles", "request-stream"} <= set(builtin_names())
    two, _ = load_scenario("two-apps")
    assert two.apps() == ["chain", "aggregator-parallel"] and [ld.entry for ld in two.loads()] == two.apps()
    cyc, _ = load_scenario("replica-cycles")
    assert cyc.loads()[0].mode == "periodic" and len(cyc.replica_schedule.cycles) == 4
    rs, _ = load_scenario("request-stream")
    assert rs.request_stream.service == "ml" and rs.request_stream.replicas == (1, 3)


def test_steps_and_trace_files_are_read_beside_the_scenario(tmp_path):
    (tmp_path / "rates.csv").write_text("at_s,value\n0,2\n10,5\n")
    (tmp_path / "w.json").write_text(json.dumps([{"time": 100, "service": "s0"}, {"time": 250, "service": "s1"}]))
    (tmp_path / "a.yaml").write_text(yaml.safe_dump({"name": "a", "description": "d", "duration_s": 20, "app": "chain",
                                                     "load": [{"mode": "open", "steps_file": "rates.csv"},
                                                              {"mode": "trace", "trace_file": "w.json"}]}))
    sc, _ = load_scenario(str(tmp_path / "a.yaml"))
    assert [(s.at_s, s.value) for s in sc.loads()[0].steps] == [(0, 2), (10, 5)]
    assert [(e.time, e.service) for e in sc.loads()[1].trace] == [(100, "s0"), (250, "s1")]
    (tmp_path / "b.yaml").write_text(yaml.safe_dump({"name": "b", "description": "d", "duration_s": 20, "app": "chain",
                                                     "load": {"mode": "trace", "trace_file": "none.json"}}))
    with pytest.raises(UserError, match=r"b\.yaml: load\.trace_file: expected a μBench workload file"):
        load_scenario(str(tmp_path / "b.yaml"))


def test_two_apps_compose_with_their_own_entries():
    app = compose([load_app(REPO / "workloads/chain.json"), load_app(REPO / "workloads/aggregator-parallel.json")])
    assert app.entry_services() == ["chain-front-end", "aggregator-parallel-front-end"]
    assert app.callees("chain-ml") == ["chain-back-end"] and app.resolve_entry("aggregator-parallel") == \
        "aggregator-parallel-front-end"
    assert len(app.services) == 8


SHORT = {"duration_s": 20, "warmup_s": 2, "rescheduler": {"period_s": 5, "start_s": 2, "max_moves": 4}}


@pytest.mark.root
@pytest.mark.slow
def test_two_apps_and_two_entries_are_reported_apart(testbed, tmp_path):
    doc = yaml.safe_load(open(load_scenario("two-apps")[1])) | SHORT | {"replicas": 1}
    sc = tmp_path / "two.yaml"
    sc.write_text(yaml.safe_dump(doc))
    r = harness(testbed.state_dir, "run", str(sc), "--policy", "default", "--out", str(tmp_path / "results"), timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    (run,) = (tmp_path / "results").glob("*/default-s0")
    req = pd.read_csv(run / "requests.csv", keep_default_na=False)  # each load's log, merged at the end
    assert set(req.entry) == {"chain-front-end", "aggregator-parallel-front-end"}
    assert not (run / "requests.1.csv").exists() and req.t_send.is_monotonic_increasing
    s = json.loads((run / "summary.json").read_text())
    entries = s["entries"]
    assert set(entries) == {"chain-front-end", "aggregator-parallel-front-end"}
    assert all(e["requests"] > 10 and e["errors"] == 0 for e in entries.values())
    assert s["requests"] == sum(e["requests"] for e in entries.values())
    assert entries["chain-front-end"]["mean_ms"] != entries["aggregator-parallel-front-end"]["mean_ms"]
    rep = harness(testbed.state_dir, "report", str(run), "--out", str(tmp_path / "report"))
    assert rep.returncode == 0, rep.stderr
    table = pd.read_csv(tmp_path / "report/entries.csv")
    assert sorted(table.entry) == sorted(entries) and list(table.requests) == [entries[e]["requests"] for e in table.entry]
    assert_clean(testbed.cluster)


@pytest.mark.root
@pytest.mark.slow
def test_deployment_requests_come_and_go(testbed, tmp_path):
    doc = yaml.safe_load(open(load_scenario("request-stream")[1])) | SHORT
    doc["request_stream"] = {"service": "ml", "rate_per_s": 1.0, "mean_lifetime_s": 3, "replicas": [1, 2]}
    sc = tmp_path / "rs.yaml"
    sc.write_text(yaml.safe_dump(doc))
    r = harness(testbed.state_dir, "run", str(sc), "--policy", "default", "--out", str(tmp_path / "results"), "--seed",
                "4", timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    (run,) = (tmp_path / "results").glob("*/default-s4")
    events = pd.read_csv(run / "events.csv", keep_default_na=False)
    arrivals = [json.loads(d) for d in events[events.kind == "request-arrival"].detail]
    departures = [json.loads(d) for d in events[events.kind == "request-departure"].detail]
    assert len(arrivals) >= 5 and len(departures) >= 3
    # each request taken when it was due, not after the previous one's pods started: taken in turn,
    # each would wait for the pods before it (0.5-3 s apiece at a request a second), and the delay
    # would grow along the stream; a loaded host may delay one by a scheduling hiccup, not all
    taken = events[events.kind == "request-arrival"].t_run.astype(float)
    late = [t - a["due_s"] for t, a in zip(taken, arrivals)]
    assert float(np.median(late)) < 0.5 and max(late) < 2.5, late
    assert {d["request"] for d in departures} <= {a["request"] for a in arrivals}
    held = [json.loads(line) for line in (run / "placements.jsonl").read_text().splitlines()]
    assert max(len(p["placement"]["ml"]) for p in held) > 1  # requests added ml replicas
    s = json.loads((run / "summary.json").read_text())
    assert s["metrics"]["requests_arrived"] == len(arrivals) + int((events.kind == "request-rejected").sum())
    assert s["metrics"]["request_rejection_rate"] is not None
    assert_clean(testbed.cluster)
