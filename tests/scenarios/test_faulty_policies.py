"""A policy is user code: its exceptions and its time are contained. A plan that raises ends the
round with a ``policy-error`` event and the rescheduler asks again next round; a placement that
raises leaves its pods pending; a plan is made outside the run's lock, so self-healing never waits
for a slow policy, and within a budget live; a placement that raises at deployment is one line."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from harness.policies.contract import Ability, Move, NoArgs, Policy
from harness.rescheduler.loop import Budget, PlanTimeout, run_round
from harness.rescheduler.evaluate import SimWorld, scenario
from harness.sim.ceenv import Dynamics, EnvConfig, default_model
from tests.conftest import REPO

FAULTY = "harness_faulty_policies"
SITE = REPO / "tests/data/faultypolicy"


def harness(*args, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SITE), str(REPO)])}
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=timeout)


class Recorder:
    def __init__(self):
        self.events = []

    def __call__(self, kind, **detail):
        self.events.append((kind, detail))


def world():
    dyn = Dynamics(default_model(None, None), EnvConfig())
    w = SimWorld(dyn, scenario(dyn, 4, 0))
    from harness.policies import build
    w.place(build("default"), range(4))
    return w


class Raises(Policy):
    name, Args, abilities = "raises", NoArgs, frozenset({Ability.PLAN})

    def __init__(self):
        super().__init__(NoArgs())

    def plan(self, view):
        raise KeyError("boom")


def test_a_plan_that_raises_ends_the_round_with_a_policy_error_event():
    rec = Recorder()
    r = run_round(Raises(), world(), 5, on_event=rec)
    assert (r.moves, r.ended) == (0, "policy-error")
    assert rec.events == [("policy-error", {"where": "plan", "error": "KeyError: 'boom'"})]


class LockedTurn:
    """A world whose turn is a lock someone else (self-healing) may want."""

    def __init__(self, inner):
        self.inner, self.lock = inner, threading.Lock()

    def view(self):
        return self.inner.view()

    def apply(self, move, view):
        return self.inner.apply(move, view)

    def turn(self):
        return self.lock


class Thinker(Policy):
    name, Args, abilities = "thinker", NoArgs, frozenset({Ability.PLAN})

    def __init__(self, world, seconds=0.0):
        super().__init__(NoArgs())
        self.world, self.seconds, self.lock_free = world, seconds, []

    def plan(self, view):
        self.lock_free.append(not self.world.lock.locked())
        time.sleep(self.seconds)
        return []


def test_a_plan_is_made_outside_the_worlds_turn():
    w = LockedTurn(world())
    policy = Thinker(w)
    assert run_round(policy, w, 5).ended == "idle"
    assert policy.lock_free == [True]


def test_a_plan_past_its_budget_ends_the_round_and_the_policy_is_not_asked_again_while_it_thinks():
    w = LockedTurn(world())
    policy, budget, rec = Thinker(w, seconds=1.0), Budget(0.2), Recorder()
    t = time.monotonic()
    assert run_round(policy, w, 5, on_event=rec, think=budget).ended == "plan-timeout"
    assert time.monotonic() - t < 0.8  # the round did not wait for the policy
    assert run_round(policy, w, 5, on_event=rec, think=budget).ended == "plan-timeout"
    assert [k for k, _ in rec.events] == ["plan-timeout", "plan-timeout"]
    assert "still deciding" in rec.events[1][1]["reason"] and len(policy.lock_free) == 1
    time.sleep(1.0)
    policy.seconds = 0.0
    assert run_round(policy, w, 5, on_event=rec, think=budget).ended == "idle"  # done thinking: asked again
    assert len(policy.lock_free) == 2


def test_a_budget_hands_the_policys_exception_to_the_round():
    with pytest.raises(KeyError):
        Budget(5)(lambda: {}["x"])
    with pytest.raises(PlanTimeout):
        Budget(0.05)(lambda: time.sleep(0.5))


def _simulate(scenario_name: str, policy: str, tmp_path, seeds: int = 1):
    r = harness("evaluate", scenario_name, "--policy", policy, "--seeds", str(seeds), "--out", str(tmp_path))
    return r


def test_a_placement_that_raises_at_deployment_is_one_line_and_status_1(tmp_path):
    r = _simulate("steady", f"{FAULTY}:RaisesInPlace", tmp_path)
    assert r.returncode == 1, r.stderr
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert lines == ["harness: policy error: policy 'raises-in-place' raised in place() at deployment: "
                     "ValueError: no idea where to put anything"], r.stderr


def test_a_run_goes_on_past_a_policy_that_raises_and_says_so(tmp_path):
    """node-failure in simulation: the planner raises every round, the placer raises at self-healing:
    the runs end, their summaries count the errors, a warning line names them."""
    import json

    r = _simulate("node-failure", f"{FAULTY}:RaisesInPlan,{FAULTY}:PlacesOnceOnly", tmp_path)
    assert r.returncode == 0, r.stderr
    summaries = {s["policy"]: s for s in (json.loads(p.read_text()) for p in tmp_path.glob("*/*/summary.json"))}
    assert summaries["raises-in-plan"]["policy_errors"] >= 5  # every round, not once and then silence
    assert summaries["places-once-only"]["policy_errors"] >= 1  # self-healing's placement
    assert summaries["raises-in-plan"]["requests"] > 0
    assert "harness: warning: raises-in-plan" in r.stderr and "harness: warning: places-once-only" in r.stderr


def test_a_policy_that_raises_can_be_left_idle_for_the_rest_of_the_run(tmp_path):
    """rescheduler.on_policy_error: idle — one policy-error, then the policy is not asked again."""
    import json

    import yaml

    sc = yaml.safe_load((REPO / "harness/scenarios/steady.yaml").read_text())
    sc["rescheduler"] |= {"period_s": 5, "on_policy_error": "idle"}
    f = tmp_path / "idle.yaml"
    f.write_text(yaml.safe_dump(sc))
    r = _simulate(str(f), f"{FAULTY}:RaisesInPlan", tmp_path)
    assert r.returncode == 0, r.stderr
    summary = json.loads(next(tmp_path.glob("*/*/summary.json")).read_text())
    assert summary["policy_errors"] == 1


def test_a_plan_of_wrong_types_is_a_counted_policy_error_not_silence(tmp_path):
    """[("a","b"), 7, "x"] from plan(): every round a policy-error, counted and warned, as a raise is."""
    import json

    r = _simulate("node-failure", f"{FAULTY}:WrongPlan", tmp_path)
    assert r.returncode == 0, r.stderr
    s = next(json.loads(p.read_text()) for p in tmp_path.glob("*/*/summary.json"))
    assert s["policy_errors"] >= 5 and "harness: warning: wrong-plan" in r.stderr


@pytest.mark.parametrize("cls,what", [("PlacesNaN", "float nan"), ("PlacesNowhere", "'no-such-node'")])
def test_a_placement_of_wrong_types_at_deployment_is_one_line(tmp_path, cls, what):
    r = _simulate("steady", f"{FAULTY}:{cls}", tmp_path)
    assert r.returncode == 1, r.stderr
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "place() returned" in lines[0] and what in lines[0], r.stderr
