"""A simulation that runs long says how far it is (issue 65, item 2): past PROGRESS_S of wall
clock, one line on stderr every PROGRESS_S (here 0, so every step shows)."""

from __future__ import annotations

import yaml

from harness.cli.main import main
from harness.scenarios import simrun


def test_a_long_simulation_shows_its_progress(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(simrun, "PROGRESS_S", 0.0)
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({"name": "s", "description": "d", "duration_s": 20, "app": "chain",
                                    "load": {"mode": "open", "steps": [{"at_s": 0, "value": 5}]}}))
    assert main(["evaluate", str(path), "--policy", "default", "--seeds", "1", "--out", str(tmp_path / "out")]) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("harness: simulating ")]
    assert any("s of virtual time" in line for line in lines) and any("replaying" in line for line in lines), lines
