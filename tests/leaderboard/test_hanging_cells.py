"""A leaderboard with a policy that hangs finishes: a cell past ``--cell-budget`` is reported
timed out (coverage matrix, ``leaderboard.json``, exit 1) while the other cells finish (issue 65,
item 3)."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import time

import yaml

from tests.conftest import REPO

SITE = REPO / "tests/data/faultypolicy"
SHORT = {"name": "short", "description": "chain, one user", "duration_s": 20, "app": "chain",
         "load": {"mode": "closed", "steps": [{"at_s": 0, "value": 1}]},
         "rescheduler": {"period_s": 5, "start_s": 2, "max_moves": 2}}


def test_a_hanging_policys_cells_are_timed_out_and_the_others_finish(tmp_path):
    sc = tmp_path / "short.yaml"
    sc.write_text(yaml.safe_dump(SHORT))
    budget1 = tmp_path / "budget1.yaml"  # a planner that hangs: each plan() within 1 s, the cell finishes
    budget1.write_text(yaml.safe_dump({**SHORT, "name": "budget1",
                                       "rescheduler": {**SHORT["rescheduler"], "plan_budget_s": 1}}))
    doc = {"version": 1, "name": "hang", "tracks": [
        {"name": "hangs", "apps": ["chain"], "scenarios": [str(sc)], "reference": "harness_faulty_policies:HangsInPlace",
         "policies": ["harness_faulty_policies:HangsInPlace"]},
        {"name": "plans", "apps": ["chain"], "scenarios": [str(budget1)],
         "policies": ["default", "harness_faulty_policies:HangsInPlan"]},
        {"name": "fine", "apps": ["chain"], "scenarios": [str(sc)], "policies": ["default"]}]}
    f = tmp_path / "board.yaml"
    f.write_text(yaml.safe_dump(doc))
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SITE), str(REPO)])}
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "harness", "leaderboard", str(f), "--seeds", "1", "--jobs", "2",
                        "--cell-budget", "25", "--out", str(out)], cwd=REPO, env=env, capture_output=True,
                       text=True, timeout=240)
    took = time.monotonic() - t0
    assert r.returncode == 1, r.stderr
    assert took < 150, took  # the hanging place() sleeps an hour
    meta = json.loads((out / "leaderboard.json").read_text())
    assert [c["cell"][0] for c in meta["failed_cells"]] == ["hangs"]
    assert "timed out" in meta["failed_cells"][0]["error"]
    with open(out / "leaderboard.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert {x["track"] for x in rows} == {"fine", "plans"} and any(x["metric"] == "mean_ms" for x in rows)
    timeouts = {x["policy"]: float(x["value"]) for x in rows if x["track"] == "plans" and x["metric"] == "plan_timeouts"}
    assert timeouts["hangs-in-plan"] >= 1 and timeouts["default"] == 0
    coverage = (out / "coverage.csv").read_text()
    assert "cells timed out on chain" in coverage, coverage
    assert "harness: error: cell hangs/chain/" in r.stderr and "/0 timed out: " in r.stderr, r.stderr


def test_on_ray_a_cell_past_its_budget_is_cancelled_and_reported_timed_out(tmp_path):
    """The cell budget was the process pool's alone: on Ray a hanging cell held its CPU for the
    hour its policy sleeps. Now it is cancelled (its worker killed) and reported as in the pool."""
    hang = tmp_path / "hang.yaml"  # place() within 600 s: the cell budget, not the policy's, ends it
    hang.write_text(yaml.safe_dump({**SHORT, "name": "hang", "rescheduler": {**SHORT["rescheduler"], "plan_budget_s": 600}}))
    sc = tmp_path / "short.yaml"
    sc.write_text(yaml.safe_dump(SHORT))
    f = tmp_path / "board.yaml"
    f.write_text(yaml.safe_dump({"version": 1, "name": "hang-ray", "tracks": [
        {"name": "hangs", "apps": ["chain"], "scenarios": [str(hang)], "reference": "harness_faulty_policies:HangsInPlace",
         "policies": ["harness_faulty_policies:HangsInPlace"]},
        {"name": "fine", "apps": ["chain"], "scenarios": [str(sc)], "policies": ["default"]}]}))
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SITE), str(REPO)])}
    r = subprocess.run([sys.executable, "-m", "harness", "leaderboard", str(f), "--seeds", "1", "--jobs", "1",
                        "--ray", "local", "--cell-budget", "45", "--out", str(out)], cwd=REPO, env=env,
                       capture_output=True, text=True, timeout=400)
    assert r.returncode == 1, r.stderr[-3000:]
    meta = json.loads((out / "leaderboard.json").read_text())
    assert meta["executor"] == "ray:local" and [c["cell"][0] for c in meta["failed_cells"]] == ["hangs"]
    assert meta["failed_cells"][0]["error"].startswith("harness_faulty_policies:HangsInPlace: timed out: still playing "
                                                       "after the cell budget of 45 s"), meta["failed_cells"]
    with open(out / "leaderboard.csv") as fh:
        assert {x["track"] for x in csv.DictReader(fh)} == {"fine"}
    assert "cells timed out on chain" in (out / "coverage.csv").read_text()
    assert f"harness: error: cell hangs/chain/{hang}/0 timed out: " in r.stderr, r.stderr[-3000:]
