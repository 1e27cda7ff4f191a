"""A provision killed with -9 leaves ansible-playbook running (issue 43, probe 7): teardown finds
the processes of the state folder's playbooks and stops them, and no other process."""

from __future__ import annotations

import subprocess
import sys
import time

from harness.provision.runner import playbook_processes, stop_playbooks


def test_teardown_finds_and_stops_the_playbooks_of_its_state_folder_only(tmp_path):
    ours, theirs = tmp_path / "state" / "ansible", tmp_path / "other" / "ansible"
    for d in (ours / "project", theirs / "project"):
        d.mkdir(parents=True)
    sleeper = [sys.executable, "-c", "import time; time.sleep(60)", "ansible-playbook", "local.yml"]
    mine = subprocess.Popen(sleeper, cwd=ours / "project")
    other = subprocess.Popen(sleeper, cwd=theirs / "project")
    try:
        time.sleep(0.3)
        assert playbook_processes(ours) == [mine.pid]
        assert stop_playbooks(ours) == [mine.pid]
        assert mine.wait(5) == -9 and other.poll() is None
        assert playbook_processes(ours) == []
    finally:
        for p in (mine, other):
            if p.poll() is None:
                p.kill()
                p.wait(5)
