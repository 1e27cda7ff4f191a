"""Calibration's fit recovers a known testbed: run directories written through the real RunDir
as the cells would report a testbed whose execution times, call and gateway overheads are known."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from harness.results.collect import find
from harness.results.rundir import RunDir
from harness.scenarios import calibration
from harness.sim.topology import model_for
from harness.spec.app import app_to_json, load_app
from harness.spec.profile import Calibration, load_profile
from harness.spec import testbed_state as ts
from tests.conftest import REPO

T0 = 1_800_000_000.0
APPS = ("chain", "aggregator-sequential", "aggregator-parallel")


def state_of(profile) -> ts.TestbedState:
    nodes = [ts.NodeState(name=n, type=t, tier=profile.node_types[t]["tier"], address="x", cpus=profile.node_types[t]["cpus"],
                       memory_gb=profile.node_types[t]["memory_gb"], speed=profile.node_types[t]["speed"])
             for n, t in profile.nodes.items()]
    return ts.TestbedState(backend="local", name="reach-local", status="ready", inventory_checksum="", inventory={},
                        created="", nodes=nodes, rtt_configured_ms=profile.rtt_ms["configured"])


def truth(profile, slower: dict[str, float], call: float, gateway: float):
    """The profile of a testbed whose execution times are the profile's × ``slower`` per node type."""
    services = {s: {t: tm.model_copy(update={"mean_ms": tm.mean_ms * slower[t]}) for t, tm in per.items()}
                for s, per in profile.services.items()}
    return profile.model_copy(update={"services": services, "calibration": Calibration(
        method="truth", call_overhead_ms=call, gateway_overhead_ms=gateway)})


def write_measured(path: Path, app, placement, before, actual, requests: int = 40) -> None:
    """A run whose cells report ``actual``'s times exactly; its placement predicted by ``before``."""
    out = RunDir(path)
    out.t0 = T0
    out.save_input("app.json", app_to_json(app))
    out.event("load-start", t=T0)
    out.placement(placement, before.predict(placement), "deploy")
    truth_now = actual.predict(placement)
    node_of = {s: nodes[0] for s, nodes in placement.items()}
    for k, t in enumerate((T0 + 1, T0 + 31)):
        n = 0 if k == 0 else requests
        rows = []
        for s, p in truth_now["services"].items():
            rows.append((f"{s}-1", s, node_of[s], 0.1, 1.0, n, n * p["T_E_ms"], n * (p["T_S_ms"] - p["T_E_ms"]),
                         n * p["T_S_ms"]))
        out._mw.writerows((t, t - T0, *r) for r in rows)
    gap = 30 / requests
    out.requests_file.write_text("t_send,latency_ms,status,bytes,error,pod\n" + "".join(
        f"{T0 + 1.2 + k * gap},{truth_now['latency_ms']},200,10,,x\n" for k in range(requests)))
    out.summary({"policy": path.name.rsplit("-s", 1)[0], "seed": 1, "warmup_s": 0})
    out.close()


@pytest.mark.parametrize("name", APPS)
def test_fit_recovers_execution_times_and_overheads(tmp_path, name):
    app = load_app(REPO / f"workloads/{name}.json")
    profile = load_profile(REPO / f"profiles/{name}.reach-local.json")
    state = state_of(profile)
    real = truth(profile, {"cloud-a": 1.7, "edge-a": 2.2, "edge-b": 2.4}, call=2.5, gateway=3.0)
    before = model_for(app, profile, state, rtt="configured")
    actual = model_for(app, real, state, rtt="configured")
    placements = calibration.placements_to_measure(app, state)
    assert set(placements) == {"all-cloud-a", "all-edge-a", "all-edge-b", "split"}
    assert placements["all-edge-a"]["ml"] != placements["all-edge-a"]["back-end"]  # parallel in aggregator-parallel
    for label, p in placements.items():
        write_measured(tmp_path / f"{label}-s1", app, p, before, actual)
    fit = calibration.fit(app, profile, state, find([tmp_path]).runs)
    for s in app.services:
        for t, tm in fit.execution_ms[s].items():
            assert tm.mean_ms == pytest.approx(real.services[s][t].mean_ms, rel=1e-3)
    assert fit.gateway_overhead_ms == pytest.approx(3.0, abs=0.01)
    if name != "aggregator-parallel":  # parallel groups: the overhead also carries the max's shift
        assert fit.call_overhead_ms == pytest.approx(2.5, abs=0.01)
    for r in fit.residuals:
        assert r["after_ms"] == pytest.approx(r["measured_ms"], rel=0.01)
        assert abs(r["before_ms"] - r["measured_ms"]) > 0.2 * r["measured_ms"]  # the profile alone was far off
    cal = calibration.calibrated_profile(profile, fit, [12.0, 14.0], placements, 30, "p.json")
    assert cal.calibration.host_reference_ms == 13.0 and cal.calibration.call_overhead_ms == fit.call_overhead_ms


def test_without_calibration_the_model_is_reachs(tmp_path):
    """A profile with no calibration gives REACH's equations unchanged; the overheads shift every
    call's RTT and the user's by exactly their values."""
    app = load_app(REPO / "workloads/chain.json")
    profile = load_profile(REPO / "profiles/chain.reach-local.json")
    plain = model_for(app, profile)
    shifted = model_for(app, profile.model_copy(update={"calibration": Calibration(
        method="t", call_overhead_ms=2.0, gateway_overhead_ms=5.0)}))
    assert np.allclose(shifted.D - plain.D, 2.0) and np.allclose(shifted.topo.user_rtt - plain.topo.user_rtt, 5.0)
    p = {"front-end": ["edge-a-1"], "ml": ["cloud-a-1"], "back-end": ["edge-a-1"], "db": ["edge-a-1"]}
    assert shifted.predict(p)["latency_ms"] == pytest.approx(plain.predict(p)["latency_ms"] + 5 + 3 * 2.0)


def test_placements_must_agree_on_replica_counts(tmp_path):
    from harness.errors import UserError

    app = load_app(REPO / "workloads/chain.json")
    with pytest.raises(UserError, match="same number of replicas"):
        calibration.measure(None, None, tmp_path, app, Path("a.json"), None, Path("p.json"),
                            {"a": {s: ["n"] for s in app.services}, "b": {s: ["n", "m"] for s in app.services}},
                            10, tmp_path / "out")


def test_refreshed_replaces_only_the_times_a_run_measured(tmp_path):
    """One run on edge-b nodes (and cloud-a for db) refreshes those (service, type) times to what
    it measured; the other types' times and the overheads stay the calibration's."""
    app = load_app(REPO / "workloads/chain.json")
    profile = load_profile(REPO / "profiles/chain.reach-local.json")
    state = state_of(profile)
    cal = truth(profile, {"cloud-a": 1.0, "edge-a": 1.0, "edge-b": 1.0}, call=2.5, gateway=3.0)
    now = truth(profile, {"cloud-a": 1.3, "edge-a": 1.3, "edge-b": 0.8}, call=2.5, gateway=3.0)
    p = {"front-end": ["edge-b-1"], "ml": ["edge-b-1"], "back-end": ["edge-b-1"], "db": ["cloud-a-1"]}
    write_measured(tmp_path / "anchor-s1", app, p, model_for(app, cal, state, rtt="configured"),
                   model_for(app, now, state, rtt="configured"))
    got = calibration.refreshed(cal, app, state, find([tmp_path]).runs)
    measured = {(s, "edge-b") for s in ("front-end", "ml", "back-end")} | {("db", "cloud-a")}
    for s in app.services:
        for t in cal.services[s]:
            want = (now if (s, t) in measured else cal).services[s][t].mean_ms
            assert got.services[s][t].mean_ms == pytest.approx(want, rel=1e-3), (s, t)
    assert got.calibration == cal.calibration
    X = model_for(app, got, state, rtt="configured").counts(p)
    assert model_for(app, got, state, rtt="configured").latency(X)[0] == pytest.approx(
        model_for(app, now, state, rtt="configured").latency(X)[0], rel=1e-3)



def test_a_calibrated_profile_finds_the_profile_it_was_made_from(tmp_path, monkeypatch):
    """The run's sim-vs-real puts REACH's model as published beside the calibrated one: the source is
    found relative to the working directory or the repository, and a profile without one has none."""
    from harness.spec.profile import source_profile

    profile = load_profile(REPO / "profiles/chain.reach-local.json")
    assert source_profile(profile) is None
    cal = truth(profile, {"cloud-a": 1.5, "edge-a": 1.5, "edge-b": 1.5}, call=2.0, gateway=1.0)
    monkeypatch.chdir(tmp_path)
    cal.calibration.source_profile = "profiles/chain.reach-local.json"  # as harness calibrate records it
    assert source_profile(cal) == profile  # found in the repository
    (tmp_path / "mine.json").write_text(profile.model_copy(update={"app": "mine"}).model_dump_json())
    cal.calibration.source_profile = "mine.json"
    assert source_profile(cal).app == "mine"  # the working directory first
    cal.calibration.source_profile = "gone.json"
    assert source_profile(cal) is None
