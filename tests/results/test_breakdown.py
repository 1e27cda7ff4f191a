"""The per-service breakdown: the cells' running totals turned into each part's measured time,
next to the model's terms, on a run directory written through the real RunDir."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from harness.results.breakdown import breakdown, interval_totals, node_busy, per_run
from harness.results.collect import find
from harness.results.rundir import RunDir
from harness.sim.latency import LatencyModel, Topology
from harness.spec.app import app_to_json, parse_app

T0 = 1_800_000_000.0
TOPO = Topology(nodes=("n1", "n2"), node_types=("cloud", "edge"), tiers=("cloud", "edge"), cpus=np.array([8, 4.0]),
                memory_mib=np.array([16384, 8192.0]), rtt=np.array([[0, 50], [50, 0.0]]), user_rtt=np.array([50, 0.5]))


def chain_app():
    job = {"compute_pi": {"range_complexity": [1, 1]}}
    return parse_app({"name": "t", "gateway": "a", "services": {
        "a": {"internal_service": job, "external_services": [{"seq_len": 1, "services": ["b"]}]},
        "b": {"internal_service": job, "external_services": []}}}, "t")


def write_run(path: Path, pulls: list[tuple[float, list[tuple]]], requests: list[tuple[float, float]]) -> Path:
    """A run of the chain a -> b with a on n1 and b on n2; ``pulls``: (t, [(pod, service, node,
    requests, internal, external, request)]); ``requests``: (t_send, latency)."""
    app = chain_app()
    model = LatencyModel(app, {"a": {"cloud": 10, "edge": 20}, "b": {"cloud": 30, "edge": 60}}, TOPO)
    out = RunDir(path)
    out.t0 = T0
    out.save_input("app.json", app_to_json(app))
    out.event("load-start", t=T0)
    placement = {"a": ["n1"], "b": ["n2"]}
    out.placement(placement, model.predict(placement), "deploy")
    for t, rows in pulls:
        out._mw.writerows((t, t - T0, pod, s, n, 0.1, 1.0, *tot) for pod, s, n, *tot in rows)
    out.requests_file.write_text("t_send,latency_ms,status,bytes,error,pod\n" +
                                 "".join(f"{t},{ms},200,10,,a-1\n" for t, ms in requests))
    out.summary({"policy": "p", "seed": 0, "warmup_s": 0})
    out.close()
    return path


def test_parts_are_the_differences_of_the_totals(tmp_path):
    # between the pulls at +1 s and +11 s: a served 10 requests of 12 ms internal, 30 external, 42 in all;
    # b 10 of 20 ms; the client saw 47 ms each. So one call a -> b took 30 - 20 = 10 ms beyond b's own
    # time, and the gateway 47 - 42 = 5 ms.
    pulls = [(T0 + 1, [("a-1", "a", "n1", 5, 100, 900, 1000), ("b-1", "b", "n2", 5, 500, 0, 500)]),
             (T0 + 11, [("a-1", "a", "n1", 15, 220, 1200, 1420), ("b-1", "b", "n2", 15, 700, 0, 700)])]
    reqs = [(T0 + 1.5 + k, 47.0) for k in range(10)] + [(T0 + 0.2, 900.0), (T0 + 11.5, 900.0)]  # outside: not counted
    run = find([write_run(tmp_path / "r", pulls, reqs)]).runs[0]
    rows = {(r["part"], r["name"]): r for r in breakdown(run, chain_app())}
    assert rows[("execution", "a")]["measured_ms"] == 12.0 and rows[("execution", "a")]["predicted_ms"] == 10.0
    assert rows[("calls", "a")]["measured_ms"] == 30.0
    assert rows[("service", "b")]["measured_ms"] == 20.0 and rows[("service", "b")]["predicted_ms"] == 60.0
    assert rows[("call", "a → b")]["measured_ms"] == 10.0 and rows[("call", "a → b")]["predicted_ms"] == 50.0
    assert rows[("gateway", "")]["measured_ms"] == 5.0 and rows[("gateway", "")]["predicted_ms"] == 50.0
    assert rows[("end-to-end", "")]["measured_ms"] == 47.0 and rows[("end-to-end", "")]["requests"] == 10
    assert rows[("end-to-end", "")]["predicted_ms"] == 50 + 10 + 50 + 60
    assert rows[("execution-on-node", "b@n2")]["measured_ms"] == 20.0
    table = per_run(list(rows.values()))
    assert set(table.part) == {"end-to-end", "gateway", "service", "execution", "calls", "call"}


def test_a_pod_first_seen_later_counts_from_zero_and_one_pull_is_not_enough(tmp_path):
    pulls = [(T0 + 1, [("a-1", "a", "n1", 5, 50, 0, 50)]),
             (T0 + 6, [("a-1", "a", "n1", 9, 90, 0, 90), ("b-1", "b", "n2", 4, 80, 0, 80)])]
    path = write_run(tmp_path / "r", pulls, [(T0 + 2, 40.0)] * 6)
    run = find([path]).runs[0]
    pods, a, b = interval_totals(run.metrics, T0, T0 + 100)
    got = pods.set_index("pod")
    assert (a, b) == (T0 + 1, T0 + 6)
    assert got.loc["a-1", "requests"] == 4 and got.loc["b-1", "requests"] == 4 and got.loc["b-1", "internal_ms"] == 80
    assert interval_totals(run.metrics, T0 + 2, T0 + 100) is None


def test_node_busy_is_the_pods_cpu_over_the_interval_and_the_nodes_cores(tmp_path):
    # two pods on n1 and one on n2; CPU seconds are running totals like the cells' counters
    pulls = [(T0 + 10, [("a-1", "a", "n1", 1, 1, 0, 1, 2.0), ("a-2", "a", "n1", 1, 1, 0, 1, 1.0),
                        ("b-1", "b", "n2", 1, 1, 0, 1, 0.5)]),
             (T0 + 30, [("a-1", "a", "n1", 9, 9, 0, 9, 6.0), ("a-2", "a", "n1", 9, 9, 0, 9, 3.0),
                        ("b-1", "b", "n2", 9, 9, 0, 9, 1.5)])]
    run = find([write_run(tmp_path / "r", pulls, [(T0 + 12, 40.0)] * 6)]).runs[0]
    busy = node_busy(run.metrics, T0, T0 + 100, {"n1": 0.5, "n2": 0.25, "n3": 1.0})
    assert busy["n1"] == (4.0 + 2.0) / 20 / 0.5 and busy["n2"] == 1.0 / 20 / 0.25 and busy["n3"] == 0.0
    assert node_busy(run.metrics, T0 + 11, T0 + 100, {"n1": 0.5}) is None


def test_runs_without_totals_have_no_breakdown(tmp_path):
    path = write_run(tmp_path / "r", [], [(T0 + 2, 40.0)] * 6)
    (path / "metrics.csv").write_text("t,t_run,pod,service,node,cpu_cores,rps\n")  # a run made before the totals
    assert breakdown(find([path]).runs[0], chain_app()) == []
    assert json.loads((path / "placements.jsonl").read_text().splitlines()[0])["predicted"]["latency_ms"] == 170
