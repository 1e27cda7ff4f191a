"""A simulated closed loop whose every request times out still sends: each user gives up at the
timeout and sends again, as live, so the summary counts what the users sent, every one timed out,
and the load not kept up (issue 65, item 4: it said sent 0, timeouts 0, kept_up true)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import yaml

from tests.conftest import REPO

HEAVY = {"name": "heavy", "description": "1,000 closed-loop users", "duration_s": 30, "warmup_s": 5, "app": "chain",
         "load": {"mode": "closed", "steps": [{"at_s": 0, "value": 1000}]}, "rescheduler": {"max_moves": 0}}


def test_a_closed_load_where_every_request_times_out_is_counted_sent_timed_out_and_not_kept_up(tmp_path):
    f = tmp_path / "heavy.yaml"
    f.write_text(yaml.safe_dump(HEAVY))
    r = subprocess.run([sys.executable, "-m", "harness", "evaluate", str(f), "--policy", "default", "--seeds", "1",
                        "--out", str(tmp_path / "o")], cwd=REPO, env=dict(os.environ), capture_output=True, text=True,
                       timeout=180)
    assert r.returncode == 0, r.stderr
    s = json.loads(next((tmp_path / "o").glob("*/*/summary.json")).read_text())
    # every user sends at 0, 10 and 20 s (10 s timeout): the two after the warm-up are summarised
    assert s["sent"] == 2000 and s["timeouts"] == 2000 and s["errors"] == 2000, s
    assert s["kept_up"] is False
    assert "harness: warning: default s0: the load was not kept up: 2000 requests sent" in r.stderr
