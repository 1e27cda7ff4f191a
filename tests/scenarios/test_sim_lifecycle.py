"""A simulated run with the profile's pod lifecycle and link jitter: pods serve only once ready, so
moves, self-healing and restarts cost what they cost live; the run's metrics.csv is the model's;
and a profile without either gives the runs it gave before."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from harness.results.rundir import METRIC_FIELDS
from harness.scenarios.session import prepare, run_simulated
from harness.spec.inventory import load_inventory
from harness.spec.profile import PodLifecycle
from harness.testbed.simulated import simulated_state
from tests.conftest import REPO

STATE = simulated_state(load_inventory(None))
BUILT_IN = sorted(p.stem for p in (REPO / "harness/scenarios").glob("*.yaml")
                  if p.stem != "admission" and "world:" not in p.read_text())  # a family's own world's: harness run only


def with_lifecycle(profile, ready: float = 1.5, ready_sd: float = 0.0, gone: float = 0.5, jitter: float = 0.0):
    types = [t for t, f in profile.node_types.items() if f.get("role", f["tier"]) != "client"]
    update = {"lifecycle": {t: PodLifecycle(ready_s=ready, ready_sd_s=ready_sd, gone_s=gone, samples=4) for t in types}}
    if jitter:
        update["rtt_sd_ms"] = {a: {b: 0.0 if a == b else jitter for b in profile.nodes} for a in profile.nodes}
    return profile.model_copy(update=update)


def simulate(tmp_path: Path, scenario: str, policies: list[str], profile=None, seeds: int = 1, edit=None) -> list[dict]:
    session = prepare(scenario, policies, STATE, None, None, REPO / "models", tmp_path, suffix="-sim")
    if profile:
        session.profile = profile(session.profile)
    if edit:
        edit(session.scenario)
    return run_simulated(STATE, session, seeds)


def events(summary: dict) -> pd.DataFrame:
    ev = pd.read_csv(Path(summary["run_dir"]) / "events.csv")
    ev["detail"] = ev.detail.map(json.loads)
    return ev


def requests(summary: dict) -> pd.DataFrame:
    r = pd.read_csv(Path(summary["run_dir"]) / "requests.csv", keep_default_na=False)
    r["t_run"] = r.t_send - r.t_send.min()
    return r


@pytest.mark.parametrize("scenario", BUILT_IN)
def test_every_built_in_scenario_plays_with_pod_lifecycle_and_jitter(tmp_path, scenario):
    for s in simulate(tmp_path, scenario, ["default", "rollout"], lambda p: with_lifecycle(p, 1.2, 0.3, 0.4, 2.0)):
        ev = events(s)
        assert "error" not in s and not s["partial"] and s["requests"] > 0, s
        assert "error" not in set(ev.kind), ev[ev.kind == "error"].detail.tolist()
        assert "lifecycle" in s["assumptions"]["cluster"]
        metrics = pd.read_csv(Path(s["run_dir"]) / "metrics.csv")
        assert tuple(metrics.columns) == METRIC_FIELDS and len(metrics) > 0


def test_self_healing_waits_for_its_pods_and_a_service_left_without_replicas_fails_meanwhile(tmp_path):
    """cloud-first puts every front-end replica on the failing nodes: live, the failure cost 26-27
    failed requests; with pods that start at once the simulation saw none."""
    before = simulate(tmp_path / "a", "node-failure", ["cloud-first"])[0]
    after = simulate(tmp_path / "b", "node-failure", ["cloud-first"], lambda p: with_lifecycle(p, ready=2.0))[0]
    assert before["errors"] == 0 and before["recovery_s"] == 0.0
    healed = events(after)
    healed = healed[healed.kind == "healed"].iloc[0]
    # the lost pods start together, sharing their node's CPU: ready after 2 s × the most on one node
    together = max(healed.detail["nodes"].count(n) for n in healed.detail["nodes"])
    took = 2.0 * together
    assert together > 1 and healed.detail["seconds"] == pytest.approx(took) and after["recovery_s"] == pytest.approx(took)
    r = requests(after)
    failed = r[r.status != 200]
    assert after["errors"] == len(failed) > 5
    assert failed.t_run.between(60, 60 + took + 0.1).all()  # only while the new pods start
    assert set(failed.error) == {"RuntimeError: no endpoint"}  # the entry had no replica: the generator's own


def test_a_moved_pods_start_time_costs_latency(tmp_path):
    """REACH moves nine pods in its first round of steady: make-before-break, each move waits for
    its new pod, so the better placement comes later and the requests meanwhile pay for it."""
    at_once = simulate(tmp_path / "a", "steady", ["reach"])[0]
    timed = simulate(tmp_path / "b", "steady", ["reach"], lambda p: with_lifecycle(p, ready=2.0))[0]
    moves = events(timed)
    moves = moves[moves.kind == "move"]
    assert len(moves) == at_once["moves"] == timed["moves"] > 2
    assert (moves.detail.map(lambda d: d["seconds"]) == 2.0).all()
    assert moves.t_run.diff().dropna().min() >= 2.0  # one after another, each waiting for its pod
    first, last = moves.t_run.min() - 2.0, moves.t_run.max()
    a, b = requests(at_once), requests(timed)
    during = lambda r: r.latency_ms[r.t_run.between(first, last)].mean()  # noqa: E731
    assert during(b) > during(a) and timed["mean_ms"] > at_once["mean_ms"]
    assert timed["errors"] == 0  # the old pod serves until the new one is ready


def test_a_restart_leaves_the_service_a_replica_short_until_the_new_pod_is_ready(tmp_path):
    from harness import faults
    from harness.spec.scenario import FaultParams

    def kill(sc):
        sc.faults = [faults.parse(FaultParams.model_validate({"at_s": 30, "kind": "pod-kill", "service": "ml"}),
                                  "faults[0]", "test")]
    s = simulate(tmp_path, "steady", ["default"], lambda p: with_lifecycle(p, ready=1.0), edit=kill)[0]
    ev = events(s)
    restarted = ev[ev.kind == "restarted"].iloc[0]
    assert restarted.detail["seconds"] == pytest.approx(1.0)
    held = [json.loads(line) for line in (Path(s["run_dir"]) / "placements.jsonl").read_text().splitlines()]
    short = [p for p in held if p["reason"] == "crash"]
    assert len(short) == 1 and len(short[0]["placement"]["ml"]) == 2  # three replicas, one dead
    assert "serves after its start time" in s["assumptions"]["fault pod-kill"]


def test_a_deployment_requests_pods_start_beside_the_stream(tmp_path):
    """The stream's arrivals keep their times when its pods take time to start (as live)."""
    at_once = simulate(tmp_path / "a", "request-stream", ["default"])[0]
    timed = simulate(tmp_path / "b", "request-stream", ["default"], lambda p: with_lifecycle(p, ready=3.0))[0]
    arrivals = [e[e.kind == "request-arrival"] for e in (events(at_once), events(timed))]
    assert len(arrivals[0]) == len(arrivals[1]) > 0
    assert (arrivals[1].t_run - arrivals[1].detail.map(lambda d: d["due_s"])).abs().max() < 0.6  # the stream's poll
    served = [p for p in map(json.loads, (Path(timed["run_dir"]) / "placements.jsonl").read_text().splitlines())
              if p["reason"] == "request-arrival"]
    assert served and min(p["t_run"] for p in served) >= arrivals[1].t_run.min() + 3.0


def test_the_simulated_metrics_are_the_models_load_per_pod(tmp_path):
    s = simulate(tmp_path, "steady", ["cloud-first"])[0]
    m = pd.read_csv(Path(s["run_dir"]) / "metrics.csv")
    assert tuple(m.columns) == METRIC_FIELDS
    assert sorted(m.t_run.unique()) == [5.0 * k for k in range(1, 25)]  # every 5 s, as live pulls
    assert len(m[m.t_run == 60.0]) == s["pods_at_start"]
    r = requests(s)
    entry = m[(m.service == "front-end") & (m.t_run == 120.0)]
    assert entry.requests.sum() == pytest.approx(len(r[r.t_run < 120]), rel=0.01)  # each request visits it once
    busy = m[m.t_run > s["warmup_s"]].groupby("t_run").cpu_cores.sum()
    assert (busy > 0).all() and (m.request_ms >= m.internal_ms).all()


def test_a_profile_without_lifecycle_or_jitter_plays_as_before(tmp_path):
    """The fields are new: without them a run is the run it was (same requests, events and placements)."""
    plain = simulate(tmp_path / "a", "node-failure", ["default"])[0]
    same = simulate(tmp_path / "b", "node-failure", ["default"], lambda p: p.model_copy(update={"lifecycle": {},
                                                                                              "rtt_sd_ms": {}}))[0]
    for f in ("requests.csv", "events.csv"):
        cut = [pd.read_csv(Path(s["run_dir"]) / f).iloc[:, 1:] for s in (plain, same)]  # but the Unix time
        assert cut[0].equals(cut[1]), f
    assert plain["mean_ms"] == same["mean_ms"] and "pods start at once" in plain["assumptions"]["cluster"]
