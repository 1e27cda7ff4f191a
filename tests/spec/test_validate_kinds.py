"""``harness validate`` tells a file's kind by its contents and checks it against that format: a
scenario, an inventory, a profile, a μBench Runner workload file, or an app (issue 42: every kind
but the app used to say "cannot tell the gateway")."""

from __future__ import annotations

import json

import pytest

from harness.spec.kinds import kind_of
from tests.conftest import REPO


@pytest.mark.parametrize("path, kind, says", [
    ("harness/scenarios/node-failure.yaml", "scenario", "scenario 'node-failure': 150 s, app chain"),
    ("inventories/kubedsm-local.yaml", "inventory", "inventory 'kubedsm-local' (local): 5 nodes"),
    ("profiles/chain.reach-local.json", "profile", "profile of app 'chain' on testbed 'reach-local'"),
    ("workloads/chain.json", "app", "app 'chain': 4 services"),
])
def test_each_shipped_file_is_recognised_and_checked_as_its_kind(path, kind, says, capsys):
    from harness.cli.main import main
    from harness.spec.loader import read_document

    assert kind_of(read_document(REPO / path)) == kind
    assert main(["validate", str(REPO / path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["kind"] == kind and out["ok"] and out["summary"][0].startswith(says)


def test_a_runner_workload_file_is_pointed_to_a_trace_load(tmp_path, capsys):
    from harness.cli.main import main

    f = tmp_path / "workload.json"
    f.write_text(json.dumps([{"time": 100 * i, "service": f"s{i % 2}"} for i in range(30)]))
    assert main(["validate", str(f)]) == 0
    out = capsys.readouterr().out
    assert "μBench Runner workload: 30 requests over 2.9 s to 2 service(s)" in out and "mode: trace" in out
    f.write_text(json.dumps([{"time": -1, "service": "s0"}]))
    assert main(["validate", str(f)]) == 2
    assert "time: must be ≥ 0" in capsys.readouterr().err


def test_a_scenario_with_three_problems_prints_all_three(tmp_path, capsys):
    from harness.cli.main import main

    f = tmp_path / "bad.yaml"
    f.write_text("name: x\ndescription: y\nduration_s: -5\napp: chain\nload: {mode: opne}\nfaultz: []\n")
    assert main(["validate", str(f)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == [f"harness: error: {f}: duration_s: must be > 0.0",
                     f"harness: error: {f}: load.mode: input should be 'closed', 'open', 'periodic' or 'trace'",
                     f"harness: error: {f}: faultz: unknown field (did you mean 'faults'?)"]
