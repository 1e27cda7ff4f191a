"""Scenario files: the built-ins load, mistakes name the file and field."""

from __future__ import annotations

import pytest
import yaml

from harness.errors import UserError
from harness.scenarios.catalog import builtin_names, load_scenario


def test_builtin_scenarios_load_and_are_the_issue_s_four():
    assert {"steady", "node-failure", "traffic-surge", "latency-shift"} <= set(builtin_names())
    sc, _ = load_scenario("node-failure")
    assert sc.replicas == 3 and sc.load.steps[0].value == 1
    assert [(f.kind, f.node_types) for f in sc.faults] == [("node-failure", ["edge-a", "cloud-a"])]
    surge, _ = load_scenario("traffic-surge")
    assert surge.autoscaling.enabled and surge.autoscaling.target_cpu == 0.5
    assert [(s.at_s, s.value) for s in surge.load.steps] == [(0, 1), (90, 6)]


def write(tmp_path, doc) -> str:
    p = tmp_path / "sc.yaml"
    p.write_text(yaml.safe_dump(doc))
    return str(p)


BASE = {"name": "x", "description": "d", "duration_s": 30, "app": "chain"}


@pytest.mark.parametrize("change, field, words", [
    ({"duration_s": -1}, "duration_s", "> 0"),
    ({"faults": [{"at_s": 5, "kind": "node-failure"}]}, "faults[0]", "needs nodes or node_types"),
    ({"faults": [{"at_s": 40, "kind": "pod-kill", "service": "ml"}]}, "", "is not before duration_s"),
    ({"faults": [{"at_s": 1, "kind": "meteor"}]}, "faults[0].kind", "node-failure"),
    ({"load": {"steps": [{"at_s": 5, "value": 1}]}}, "load", "start at at_s 0"),
    ({"load": {"mode": "closed", "steps": [{"at_s": 0, "value": 1.5}]}}, "load", "whole numbers"),
    ({"colour": "red"}, "colour", "unknown field"),
])
def test_mistakes_name_file_and_field(tmp_path, change, field, words):
    path = write(tmp_path, {**BASE, **change})
    with pytest.raises(UserError) as e:
        load_scenario(path)
    msg = str(e.value)
    assert msg.startswith(path) and words in msg and "\n" not in msg
    if field:
        assert f": {field}" in msg


def test_unknown_name_lists_the_builtins():
    with pytest.raises(UserError, match="built-in: .*node-failure"):
        load_scenario("no-such-scenario")
