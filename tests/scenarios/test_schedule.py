"""A replica schedule (KubeDSM's workloads): its cycles play on time and the report's edge ratio
over time is the placements'."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import yaml

from harness.errors import UserError
from harness.scenarios.catalog import load_scenario
from tests.scenarios.test_live import assert_clean, harness, testbed  # noqa: F401  (the fixture)

SCHEDULE = {"name": "cycles", "description": "three cycles of fixed replica counts", "duration_s": 21, "app": "chain",
            "replicas": 1, "warmup_s": 1, "rescheduler": {"period_s": 30, "start_s": 30, "max_moves": 0},
            "replica_schedule": {"cycle_s": 6, "cycles": [{"db": 2}, {"db": 4, "ml": 2}, {"db": 1, "ml": 1}]}}


def test_a_schedule_with_the_autoscaler_or_a_zero_count_is_refused(tmp_path):
    for change, words in (({"autoscaling": {"enabled": True}}, "bypasses the autoscaler"),
                          ({"replica_schedule": {"cycle_s": 5, "cycles": [{"db": 0}]}}, "at least 1 replica")):
        p = tmp_path / "s.yaml"
        p.write_text(yaml.safe_dump(SCHEDULE | change))
        with pytest.raises(UserError, match=words):
            load_scenario(str(p))


@pytest.mark.root
@pytest.mark.slow
def test_unknown_service_in_a_schedule_is_refused_before_deploying(testbed, tmp_path):
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(SCHEDULE | {"replica_schedule": {"cycle_s": 5, "cycles": [{"dbx": 2}]}}))
    r = harness(testbed.state_dir, "run", str(p), "--policy", "default", "--out", str(tmp_path / "r"))
    assert r.returncode == 2 and "replica_schedule.cycles[0].dbx: unknown service 'dbx'" in r.stderr
    assert not (tmp_path / "r").exists() or not list((tmp_path / "r").rglob("events.csv"))


@pytest.mark.root
@pytest.mark.slow
def test_cycles_play_on_time_and_the_report_follows_the_placements(testbed, tmp_path):
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(SCHEDULE))
    r = harness(testbed.state_dir, "run", str(p), "--policy", "default", "--out", str(tmp_path / "results"), timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    (run,) = (tmp_path / "results").glob("*/default-s0")
    events = pd.read_csv(run / "events.csv", keep_default_na=False)
    cycles = [json.loads(d) for d in events[events.kind == "replica-cycle"].detail]
    assert [c["cycle"] for c in cycles] == [0, 1, 2]
    assert all(abs(c["late_s"]) <= 1.0 for c in cycles), cycles
    t_run = events[events.kind == "replica-cycle"].t_run.astype(float).tolist()
    assert all(abs(t - 6 * k) <= 1.0 for k, t in enumerate(t_run)), t_run
    held = [json.loads(line) for line in (run / "placements.jsonl").read_text().splitlines()]
    after = {rec["reason"]: rec["placement"] for rec in held}
    assert len(after["cycle 1"]["db"]) == 4 and len(after["cycle 1"]["ml"]) == 2
    assert len(after["cycle 2"]["db"]) == 1 and len(after["cycle 2"]["ml"]) == 1
    rep = harness(testbed.state_dir, "report", str(run), "--out", str(tmp_path / "report"))
    assert rep.returncode == 0, rep.stderr
    over = pd.read_csv(tmp_path / "report/placement_over_time.csv")
    tiers = {n.name: n.role for n in testbed.cluster.nodes}
    for row, rec in zip(over.itertuples(), held):  # one row per placement held, in order
        ratios = [sum(tiers[n] == "edge" for n in nodes) / len(nodes) for nodes in rec["placement"].values() if nodes]
        assert row.edge_ratio == pytest.approx(sum(ratios) / len(ratios))
    assert "Placement metrics" in (tmp_path / "report/report.html").read_text()
    s = json.loads((run / "summary.json").read_text())
    assert 0 <= s["metrics"]["edge_ratio"] <= 1 and s["metrics"]["rejection_rate"] == 0
    assert_clean(testbed.cluster)
