"""Fault kinds: each one's parameters, its up-front check against a testbed and an app, and the
catalogue entries it declares."""

from __future__ import annotations

import pytest
import yaml

from harness import events, faults
from harness.errors import UserError
from harness.scenarios.catalog import load_scenario
from harness.spec.app import load_app
from harness.spec.inventory import load_inventory
from harness.spec.scenario import FaultParams
from harness.spec.testbed_state import NodeState
from tests.conftest import REPO


@pytest.fixture(scope="module")
def nodes():
    inv = load_inventory()
    return [NodeState(name=n.name, type=n.type, tier=inv.node_type(n).tier, address="", cpus=1, memory_gb=1, speed=1)
            for n in inv.nodes]


@pytest.fixture(scope="module")
def chain():
    return load_app(REPO / "workloads/chain.json")


def parsed(doc: dict) -> FaultParams:
    return faults.parse(FaultParams.model_validate(doc), "faults[0]", "sc.yaml")


def test_every_kind_is_a_plug_in_with_its_event():
    kinds = faults.load_all()
    assert set(kinds) == {"node-failure", "node-recovery", "latency", "pod-kill", "cpu-hog"}
    for name in kinds:
        e = events.get(name)
        assert e is not None and e.disturbs and e.marker in ("fault", "recovery")
        assert "window_s" in e.fields and "late_s" in e.fields
    assert events.get("node-recovery").marker == "recovery"


@pytest.mark.parametrize("doc, problem", [
    ({"kind": "node-failure", "nodes": ["edge-z-9"]}, "unknown node 'edge-z-9'"),
    ({"kind": "node-recovery", "node_types": ["fog-x"]}, "no node of type 'fog-x'"),
    ({"kind": "latency", "tiers": ["cloud", "moon"], "rtt_ms": 5}, "no node of tier 'moon'"),
    ({"kind": "pod-kill", "service": "nope"}, "unknown service 'nope'"),
    ({"kind": "cpu-hog", "node": "cloud-z", "duration_s": 5}, "unknown node 'cloud-z'"),
    ({"kind": "cpu-hog", "node_type": "edge-q", "duration_s": 5}, "no node of type 'edge-q'"),
])
def test_references_are_checked_before_anything_runs(nodes, chain, doc, problem):
    f = parsed({"at_s": 1, **doc})
    with pytest.raises(UserError) as e:
        faults.check_all([f], nodes, chain, "sc.yaml")
    assert str(e.value).startswith("sc.yaml: faults[0]: ") and problem in str(e.value)


def test_good_references_pass(nodes, chain):
    good = [{"kind": "node-failure", "node_types": ["edge-a", "cloud-a"]}, {"kind": "node-recovery", "nodes": ["edge-a-1"]},
            {"kind": "latency", "tiers": ["cloud", "edge"], "rtt_ms": 80}, {"kind": "pod-kill", "service": "db"},
            {"kind": "cpu-hog", "node_type": "cloud-a", "workers": 2, "duration_s": 10}]
    faults.check_all([parsed({"at_s": 1, **d}) for d in good], nodes, chain, "sc.yaml")


@pytest.mark.parametrize("doc, field, words", [
    ({"kind": "cpu-hog", "duration_s": 5}, "faults[0]", "one of node or node_type"),
    ({"kind": "cpu-hog", "node": "cloud-a-1", "duration_s": 0}, "faults[0].duration_s", "> 0"),
    ({"kind": "cpu-hog", "node": "cloud-a-1", "duration_s": 5, "workers": 0}, "faults[0].workers", "≥ 1"),
    ({"kind": "latency", "tiers": ["cloud"], "rtt_ms": 5}, "faults[0].tiers", "at least 2"),
    ({"kind": "pod-kill", "service": "db", "nodes": ["x"]}, "faults[0].nodes", "unknown field"),
])
def test_a_kind_s_own_model_names_the_field(doc, field, words):
    with pytest.raises(UserError) as e:
        parsed({"at_s": 1, **doc})
    assert f": {field}: " in str(e.value) and words in str(e.value)


def test_the_latency_shift_scenario_doubles_the_cloud_edge_rtt():
    sc, _ = load_scenario("latency-shift")
    (f,) = sc.faults
    assert (f.kind, sorted(f.tiers), f.rtt_ms, f.at_s) == ("latency", ["cloud", "edge"], 100, 60)


def test_a_scenario_file_with_a_cpu_hog_loads(tmp_path):
    p = tmp_path / "hog.yaml"
    p.write_text(yaml.safe_dump({"name": "hog", "description": "d", "duration_s": 30, "app": "chain",
                                 "faults": [{"at_s": 5, "kind": "cpu-hog", "node_type": "cloud-a", "duration_s": 10}]}))
    sc, _ = load_scenario(str(p))
    assert sc.faults[0].workers == 1 and faults.load_all()["cpu-hog"].window_s(sc.faults[0]) == 0
