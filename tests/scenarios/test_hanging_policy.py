"""A policy that hangs (a plan() or place() that sleeps) costs a simulated run its budget
(``rescheduler.plan_budget_s`` of wall clock per call), counted as ``plan_timeouts`` and warned
as live: never the run (issue 65, item 3)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import yaml

from tests.conftest import REPO

FAULTY = "harness_faulty_policies"
SITE = REPO / "tests/data/faultypolicy"


def evaluate(tmp_path, *policies: str) -> subprocess.CompletedProcess:
    sc = yaml.safe_load((REPO / "harness/scenarios/node-failure.yaml").read_text())
    sc["rescheduler"] |= {"plan_budget_s": 1}
    sc["duration_s"] = 90
    f = tmp_path / "hang.yaml"
    f.write_text(yaml.safe_dump(sc))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SITE), str(REPO)])}
    return subprocess.run([sys.executable, "-m", "harness", "evaluate", str(f), "--policy",
                           ",".join(f"{FAULTY}:{p}" for p in policies), "--seeds", "1", "--out", str(tmp_path / "o")],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


def test_a_plan_or_a_placement_that_hangs_in_simulation_is_a_counted_plan_timeout(tmp_path):
    t0 = time.monotonic()
    r = evaluate(tmp_path, "HangsInPlan", "HangsAfterDeploy")
    assert r.returncode == 0, r.stderr
    assert time.monotonic() - t0 < 90
    s = {x["policy"]: x for x in (json.loads(p.read_text()) for p in (tmp_path / "o").glob("*/*/summary.json"))}
    assert s["hangs-in-plan"]["plan_timeouts"] >= 1 and s["hangs-in-plan"]["requests"] > 0
    assert s["hangs-after-deploy"]["plan_timeouts"] >= 1  # self-healing's placement, its pods left pending
    assert "harness: warning: hangs-in-plan" in r.stderr and "timed out" in r.stderr
    assert "harness: warning: hangs-after-deploy" in r.stderr


def test_a_placement_that_hangs_at_deployment_is_one_line(tmp_path):
    r = evaluate(tmp_path, "HangsInPlace")
    assert r.returncode == 1, r.stderr
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert lines == ["harness: policy error: policy 'hangs-in-place' at deployment: place() gave no placement "
                     "(no answer within 1 s)"], r.stderr
