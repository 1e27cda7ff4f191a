"""What can be found before deploying is found before deploying, in one line with exit status 2:
a damaged state file, a fault naming what the testbed lacks, an app too big for it. A recorded
testbed state stands in for a provisioned one (nothing here reaches a node)."""

from __future__ import annotations

import pytest

import yaml

from harness.spec.inventory import load_inventory
from harness.spec.testbed_state import save_state, state_path
from harness.testbed.local.layout import layout_for
from harness.testbed.local.provision import initial_state


@pytest.mark.parametrize("command", [["status"], ["run", "steady", "--policy", "default"], ["undeploy"]])
def test_state_file_cut_anywhere_is_one_line_and_exit_2(tmp_path, capsys, command):
    # finding 5: testbed.yaml cut in half made status and run die with KeyError: 'layout'
    from harness.cli.main import main

    inv = load_inventory()
    state = initial_state(inv, layout_for(inv))
    state.status = "ready"
    full = save_state(tmp_path, state).read_text()
    for share in (0.2, 0.5, 0.8, 0.95, 0.999):
        state_path(tmp_path).write_text(full[: int(len(full) * share)])
        assert main(["--state-dir", str(tmp_path), *command]) == 2, share
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "testbed.yaml" in err and "Traceback" not in err, (share, err)


@pytest.fixture
def recorded(tmp_path):
    inv = load_inventory()
    state = initial_state(inv, layout_for(inv))
    state.status = "ready"
    save_state(tmp_path / ".harness", state)
    return tmp_path


def run_cli(capsys, state_root, *args) -> tuple[int, str]:
    from harness.cli.main import main

    rc = main(["--state-dir", str(state_root / ".harness"), "run", *args, "--out", str(state_root / "results")])
    return rc, capsys.readouterr().err.strip()


@pytest.mark.parametrize("fault, expected", [
    ({"kind": "node-failure", "nodes": ["edge-z-9"]}, "faults[0]: unknown node 'edge-z-9'"),
    ({"kind": "node-failure", "node_types": ["edge-q"]}, "faults[0]: no node of type 'edge-q'"),
    ({"kind": "cpu-hog", "node": "cloud-z", "duration_s": 5}, "faults[0]: unknown node 'cloud-z'"),
])
def test_a_fault_naming_what_the_testbed_lacks_stops_before_deploying(recorded, capsys, fault, expected):
    # finding 4: an unknown node or node type was found 10 s into the run, after deploying
    sc = recorded / "sc.yaml"
    sc.write_text(yaml.safe_dump({"name": "x", "description": "x", "app": "chain", "duration_s": 30,
                                  "faults": [{"at_s": 10, **fault}]}))
    rc, err = run_cli(capsys, recorded, str(sc), "--policy", "default")
    assert rc == 2 and len(err.splitlines()) == 1 and expected in err, err
    assert not list((recorded / "results").glob("*"))  # no run directory: nothing started


def test_an_app_bigger_than_the_testbed_stops_before_deploying(recorded, capsys):
    sc = recorded / "sc.yaml"
    sc.write_text(yaml.safe_dump({"name": "x", "description": "x", "app": "chain", "duration_s": 30, "replicas": 200}))
    rc, err = run_cli(capsys, recorded, str(sc), "--policy", "default")
    assert rc == 2 and "CPU over 800 pods; the testbed's 6 nodes have 28" in err, err
