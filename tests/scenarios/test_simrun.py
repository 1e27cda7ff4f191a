"""Scenarios played in simulation (``harness evaluate SCENARIO``): the same run and scenario
elements as live, on a simulated cluster in virtual time, writing the same run directory."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from harness import events
from harness.scenarios import elements
from harness.scenarios.catalog import load_scenario
from harness.scenarios.session import prepare, run_simulated
from harness.spec.inventory import load_inventory
from harness.testbed.simulated import SimCluster, simulated_state
from tests.conftest import REPO

BUILT_IN = sorted(p.stem for p in (REPO / "harness/scenarios").glob("*.yaml")
                  if "world:" not in p.read_text())  # a family's own world's: harness run only
STATE = simulated_state(load_inventory(None))
TESTBED = {"admission": simulated_state(load_inventory(REPO / "inventories/hephaestus-local.yaml"))}  # else REACH's


def simulate(tmp_path: Path, scenario: str, policies: list[str], seeds: int = 1, edit=None) -> list[dict]:
    state = TESTBED.get(scenario, STATE)
    session = prepare(scenario, policies, state, None, None, REPO / "models", tmp_path, suffix="-sim")
    if edit:
        edit(session.scenario)
    return run_simulated(state, session, seeds)


def fault(spec: dict):
    """A fault as a scenario file's loader gives it: checked by its kind's model."""
    from harness import faults
    from harness.spec.scenario import FaultParams

    return faults.parse(FaultParams.model_validate(spec), "faults[0]", "test")


def requests(summary: dict) -> pd.DataFrame:
    return pd.read_csv(Path(summary["run_dir"]) / "requests.csv")


@pytest.mark.parametrize("scenario", BUILT_IN)
def test_every_built_in_scenario_plays_in_simulation(tmp_path, scenario):
    """A placer and a planner on each: a whole run directory, every event declared, requests."""
    for s in simulate(tmp_path, scenario, ["default", "rollout"]):
        run = Path(s["run_dir"])
        assert "error" not in s and s["world"] == "sim" and not s["partial"]
        assert s["requests"] > 0 and s["mean_ms"] > 0 and s["p95_ms"] >= s["p50_ms"]
        assert {"app.json", "scenario.yaml", "testbed.yaml", "profile.json", "policy.json", "simulation.json"} <= \
            {p.name for p in (run / "inputs").iterdir()}
        ev = pd.read_csv(run / "events.csv")
        assert {"deploy", "load-start"} <= set(ev.kind)
        assert all(events.get(k) is not None for k in ev.kind)
        assert (run / "placements.jsonl").read_text().count("\n") >= 1


def test_a_node_failure_heals_at_its_time_and_the_pods_leave_the_failed_nodes(tmp_path):
    s = simulate(tmp_path, "node-failure", ["default"])[0]
    ev = pd.read_csv(Path(s["run_dir"]) / "events.csv")
    fail = ev[ev.kind == "node-failure"].iloc[0]
    assert fail.t_run == 60.0
    failed = json.loads(fail.detail)["nodes"]
    healed = json.loads(ev[ev.kind == "healed"].iloc[0].detail)
    assert healed["lost"] == len(json.loads(fail.detail)["lost"]) and not set(healed["nodes"]) & set(failed)
    assert s["recovery_s"] == 0.0  # pods start at once in simulation (an assumption the summary states)
    assert "crash_watch" in s["assumptions"]


def test_the_same_seed_gives_the_same_run_and_open_arrivals_differ_between_seeds(tmp_path):
    def open_load(sc):
        sc.load.mode = "open"  # 1 request/s, Poisson
    a, b = simulate(tmp_path / "a", "steady", ["default"], seeds=2, edit=open_load)
    again = simulate(tmp_path / "b", "steady", ["default"], seeds=1, edit=open_load)[0]
    ra, rb, ragain = requests(a), requests(b), requests(again)
    assert ra.latency_ms.tolist() == ragain.latency_ms.tolist()
    assert len(ra) != len(rb) or ra.latency_ms.tolist() != rb.latency_ms.tolist()


def test_a_cpu_hog_slows_the_requests_while_it_runs(tmp_path):
    def hog(sc):
        sc.faults = [fault({"at_s": 40, "kind": "cpu-hog", "node_type": "cloud-a", "workers": 2, "duration_s": 30})]
    s = simulate(tmp_path, "steady", ["cloud-first"], edit=hog)[0]
    r = requests(s)
    t = r.t_send - r.t_send.min()
    before, during, after = (r.latency_ms[(t >= a) & (t < b)].mean() for a, b in ((10, 40), (41, 69), (71, 120)))
    # each request draws its own job times (sim.variability): before and after agree within that noise
    assert during > 1.2 * before and abs(after / before - 1) < 0.02
    assert "fault cpu-hog" in s["assumptions"]


def test_a_latency_shift_is_seen_by_the_requests_after_it(tmp_path):
    s = simulate(tmp_path, "latency-shift", ["default"])[0]
    r = requests(s)
    t = r.t_send - r.t_send.min()
    assert r.latency_ms[t > 65].mean() > r.latency_ms[(t > 10) & (t < 55)].mean() + 20


def test_a_killed_pod_is_restarted_by_the_crash_watch_within_a_second(tmp_path):
    def kill(sc):
        sc.faults = [fault({"at_s": 30, "kind": "pod-kill", "service": "ml"})]
    s = simulate(tmp_path, "steady", ["default"], edit=kill)[0]
    ev = pd.read_csv(Path(s["run_dir"]) / "events.csv")
    crashed = ev[ev.kind == "pod-crashed"]
    assert len(crashed) == 1 and 30 <= crashed.iloc[0].t_run <= 31
    assert (ev.kind == "restarted").sum() == 1


def test_every_element_is_one_module_with_its_driver_and_its_assumptions():
    for m in elements.modules():
        assert callable(m.wanted) and callable(m.driver) and isinstance(m.SIMULATION_ASSUMES, str), m.__name__
    sc, _ = load_scenario("replica-cycles")
    assert [m.__name__.rsplit(".", 1)[1] for m in elements.wanted(sc)] == ["replica_schedule", "crash_watch",
                                                                          "rescheduler"]


def test_the_simulated_cluster_keeps_the_cluster_contract():
    c = SimCluster(STATE)
    from harness.spec.app import load_app

    c.set_app(load_app(REPO / "workloads/chain.json"))
    p = c.start_pod("ml", "edge-a-1")
    assert c.pods() == [p] and c.pod_alive(p)
    c.kill_pod(p)
    assert not c.pod_alive(p) and c.pods() == [p]  # crashed but still published
    assert c.fail_node("edge-a-1") == [p] and c.pods() == [] and not c.node_up("edge-a-1")
    c.recover_node("edge-a-1")
    assert c.node_up("edge-a-1")
    c.set_latency("cloud-a-1", "edge-a-1", 100.0)
    assert c.rtt_configured()["edge-a-1"]["cloud-a-1"] == 100.0


@pytest.mark.parametrize("hold", [0.0, 2.0])
def test_a_stopped_pod_holds_its_room_for_terminating_s_of_the_run_clock(hold):
    """Kubernetes' graceful deletion: a pod stopped (scaled down, or a move's old copy) is still
    counted on its node until it has gone; in a simulated run for ``terminating_s``."""
    from harness import shipped
    from harness.spec.app import load_app

    cluster, now = SimCluster(STATE, terminating_s=hold), [100.0]
    cluster.clock = lambda: now[0]
    cluster.set_app(load_app(shipped.workload("chain")))
    node = next(n.name for n in STATE.nodes if n.role == "edge")
    old = cluster.start_pod("ml", node)
    cluster.stop_pod(old)
    assert cluster.pods() == [] and cluster.leaving() == ([old] if hold else [])
    now[0] += hold - 0.01
    assert cluster.leaving() == ([old] if hold else [])
    now[0] += 0.02
    assert cluster.leaving() == []
