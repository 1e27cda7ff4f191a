"""A damaged testbed state file is one clear line and exit status 2, never a traceback."""

from __future__ import annotations

import pytest

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
