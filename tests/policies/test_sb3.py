"""A Stable-Baselines3 agent trained on harness/CEEnv-v0 is a policy with no glue: ``--policy
sb3[model=agent.zip]`` in evaluate (and so in run and the leaderboard); its spaces are checked
against CEEnv's before a run, and a MaskablePPO agent is handed CEEnv's mask."""

import json
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

import harness  # noqa: F401 — registers harness/CEEnv-v0
from harness.sim.ceenv import EnvConfig

sb3_contrib = pytest.importorskip("sb3_contrib")

APP, PROFILE = "workloads/chain.json", "profiles/chain.reach-local.json"


def _agent(tmp_path, name, **config):
    env = gym.make("harness/CEEnv-v0", app=APP, profile=PROFILE, **({"config": EnvConfig(**config)} if config else {}))
    agent = sb3_contrib.MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, seed=1, verbose=0)
    agent.learn(128)
    agent.save(tmp_path / name)
    return tmp_path / f"{name}.zip"


def _evaluate(tmp_path, policy):
    return subprocess.run([sys.executable, "-m", "harness", "evaluate", "node-failure", "--policy", policy, "--seeds",
                           "1", "--out", str(tmp_path / "out"), "--json"], capture_output=True, text=True)


def test_a_maskable_ppo_agent_is_ranked_by_evaluate(tmp_path):
    model = _agent(tmp_path, "agent")
    r = _evaluate(tmp_path, f"sb3[model={model}],default")
    assert r.returncode == 0, r.stderr
    rows = {s["policy"]: s for s in json.loads(r.stdout)}
    sb3 = f"sb3[model={model}]"  # a policy with arguments runs under its reference
    assert set(rows) == {sb3, "default"} and rows[sb3]["requests"] > 0


def test_an_agent_of_other_spaces_is_refused_in_one_line(tmp_path):
    model = _agent(tmp_path, "small", max_replicas=3)  # the episodes' replicas stay within its 3 slots
    r = _evaluate(tmp_path, f"sb3[model={model}]")
    assert r.returncode == 2
    err = r.stderr.strip().splitlines()[-1]
    assert "observes" in err and "CEEnv" in err and "max_replicas 5" in err
    r = _evaluate(tmp_path, f"sb3[model={model},max_replicas=3]")  # said as trained: it plays
    assert r.returncode == 0, r.stderr


def test_the_mask_reaches_a_maskable_agent(tmp_path):
    from harness.policies import build

    policy = build("sb3", model=str(_agent(tmp_path, "agent")))
    seen = {}

    def predict(obs, deterministic=True, action_masks=None):
        seen["mask"] = action_masks
        return np.array(int(np.flatnonzero(action_masks)[0])), None
    policy.agent.predict = predict
    from harness.rescheduler.evaluate import SimWorld, scenario, slots_for
    from harness.sim.ceenv import Dynamics, default_model

    dyn = Dynamics(default_model(APP, PROFILE), EnvConfig())
    world = SimWorld(dyn, scenario(dyn, 8, 0))  # REACH's Chain, 8 pods placed by the default scheduler
    world.place(build("default"), slots_for(dyn, 8))
    moves = policy.plan(world.view())
    assert seen["mask"].dtype == bool and seen["mask"].any()
    assert all(m.pod and m.node for m in moves)


def test_a_leaderboard_ranks_the_agent_with_no_glue(tmp_path):
    """A track lists the agent by its reference; the leaderboard plays it in every cell of its app
    and ranks it beside the baseline."""
    import csv

    import yaml

    model = _agent(tmp_path, "agent")
    board = tmp_path / "board.yaml"
    board.write_text(yaml.safe_dump({"version": 1, "name": "sb3", "tracks": [
        {"name": "reschedule", "apps": ["chain"], "scenarios": ["node-failure"], "primary": "mean_ms",
         "policies": [f"sb3[model={model}]", "default"]}]}))
    r = subprocess.run([sys.executable, "-m", "harness", "leaderboard", str(board), "--seeds", "2", "--jobs", "1",
                        "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    with open(tmp_path / "out/ranked-sim.csv") as f:
        ranked = {row["policy"]: row for row in csv.DictReader(f)}
    sb3 = f"sb3[model={model}]"
    assert set(ranked) == {sb3, "default"} and float(ranked[sb3]["mean"]) > 0
    with open(tmp_path / "out/leaderboard.csv") as f:
        played = [row for row in csv.DictReader(f) if row["policy"] == sb3 and row["metric"] == "mean_ms"]
    assert sorted(row["seed"] for row in played) == ["0", "1"] and all(float(row["value"]) > 0 for row in played)
