"""HephaestusForge's world keeps the episodes its seeds give, bit for bit: seeded plays of the
step-by-step env (through its Gymnasium face, and with a baseline drawing from the world's own
generator) and of the vector form, in the paper's world, the code's (``hf_compat``) and the sites
mode, against a recording (``data/multicluster_trajectories.json``).

Each step is recorded as a digest of its exact bytes — observation, action mask, reward, done —
with the episode rows (the measures the studies print) and the sum of the rewards in full, so a
change to any rule, any draw of the random streams or any float operation shows, at the first
step it touches. Record again only for a change of behaviour meant as one:

    .venv/bin/python -m tests.sim.test_multicluster_trajectory --write
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from harness.families.hephaestus.baselines import BASELINES, SPREAD_HEURISTICS
from harness.families.hephaestus.world import MultiClusterConfig, MultiClusterEnv
from harness.families.hephaestus.world_vector import MultiClusterVector
from tests.conftest import REPO

FIXTURE = Path(__file__).parent / "data" / "multicluster_trajectories.json"
SITES = str(REPO / "inventories/hephaestus-local.yaml")

# the worlds played: each rule's branches (deploy-all, the spreads, rejection with and without room,
# lifetimes ending within an episode and at its reset, the running requests outgrowing the vector's
# slots, the latency drift, sites that do not drift) and sums over 4, 8, 12 and 16 clusters
WORLDS = {
    "paper": dict(episode_steps=60),
    "paper-16-long-lived": dict(clusters=16, replicas=(1, 3), mean_lifetime=10.0),
    "paper-light": dict(arrival_rate=10, episode_steps=40),
    "paper-12": dict(clusters=12, replicas=(2, 12), arrival_rate=10, objective="latcost", episode_steps=50),
    "code": dict(hf_compat=True, objective="balanced", episode_steps=40),
    "code-8": dict(clusters=8, replicas=(4, 16), hf_compat=True, episode_steps=40),
    "sites": dict(inventory=SITES, arrival_rate=10, episode_steps=40),
    "sites-code": dict(inventory=SITES, hf_compat=True, objective="costineq", episode_steps=40),
}
SCALAR_STEPS, VECTOR_STEPS, VECTOR_ENVS = 200, 100, 4


def choose(rng: np.random.Generator, mask: np.ndarray) -> int:
    """Half the time an allowed action, else any (a deploy-all without room is rejected)."""
    return int(rng.choice(np.flatnonzero(mask))) if rng.random() < 0.5 else int(rng.integers(len(mask)))


def digest(*parts) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(np.ascontiguousarray(p).tobytes())
    return h.hexdigest()[:12]


def rows(finished: list[dict]) -> list[dict]:
    return [{k: float(v) for k, v in r.items()} for r in finished]


def play_gym(world: str) -> dict:
    """The step-by-step env through ``harness/MultiCluster-v0``, reset when an episode ends."""
    import gymnasium as gym

    import harness  # noqa: F401  (registers harness's ids)

    env = gym.make("harness/MultiCluster-v0", **WORLDS[world])
    rng = np.random.default_rng(7)
    obs, info = env.reset(seed=11)
    steps, actions, total, episodes = [digest(obs, info["action_mask"])], [], 0.0, []
    for _ in range(SCALAR_STEPS):
        a = choose(rng, info["action_mask"])
        obs, reward, done, truncated, info = env.step(a)
        actions.append(a)
        total += reward
        steps.append(digest(obs, info["action_mask"], np.float64(reward), np.bool_(done), np.bool_(truncated)))
        if done:
            episodes.append(info["episode"])
            obs, info = env.reset()
            steps.append(digest(obs, info["action_mask"]))
    return {"actions": actions, "steps": steps, "reward_sum": total, "episodes": rows(episodes)}


def play_baseline(world: str, name: str) -> dict:
    """The step-by-step env as the studies play it: a baseline (hf-latency-greedy draws from the
    world's generator) over whole episodes."""
    env = MultiClusterEnv(MultiClusterConfig(**WORLDS[world]), seed=3)
    choose_ = {**BASELINES, **SPREAD_HEURISTICS}[name]
    steps, actions, total = [], [], 0.0
    for _ in range(3):
        obs, done = env.reset(), False
        steps.append(digest(obs, env.action_masks()))
        while not done:
            a = choose_(env)
            obs, reward, done, _ = env.step(a)
            actions.append(a)
            total += reward
            steps.append(digest(obs, env.action_masks(), np.float64(reward), np.bool_(done)))
    return {"actions": actions, "steps": steps, "reward_sum": total, "episodes": rows(env.finished)}


def play_vector(world: str) -> dict:
    return _play_vector(world)[0]


def _play_vector(world: str) -> tuple[dict, MultiClusterVector]:
    vec = MultiClusterVector(MultiClusterConfig(**WORLDS[world]), VECTOR_ENVS, seed=5)
    rng = np.random.default_rng(9)
    obs = vec.reset()
    masks = vec.action_masks()
    steps, actions, total = [digest(obs, masks)], [], 0.0
    for _ in range(VECTOR_STEPS):
        a = np.array([choose(rng, m) for m in masks])
        obs, reward, done, _ = vec.step(a)
        masks = vec.action_masks()
        actions.append(a.tolist())
        total += float(reward.sum())
        steps.append(digest(obs, masks, reward.astype(np.float64), done.astype(np.bool_)))
    return {"actions": actions, "steps": steps, "reward_sum": total, "episodes": rows(vec.finished)}, vec


CASES = {**{f"gym/{w}": (play_gym, (w,)) for w in WORLDS},
         "baseline/code/hf-latency-greedy": (play_baseline, ("code", "hf-latency-greedy")),
         "baseline/paper-light/hf-latency-greedy": (play_baseline, ("paper-light", "hf-latency-greedy")),
         "baseline/paper/spread-bf1b1": (play_baseline, ("paper", "spread-bf1b1")),
         "baseline/code-8/spread-ffd": (play_baseline, ("code-8", "spread-ffd")),
         **{f"vector/{w}": (play_vector, (w,)) for w in WORLDS}}


def record(case: str) -> dict:
    play, args = CASES[case]
    return play(*args)


def same(a, b) -> bool:
    """Equal, NaN equal to NaN (an episode that accepted nothing has no cost or latency)."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


@pytest.mark.parametrize("case", list(CASES))
def test_a_seeded_play_gives_the_recorded_trajectory(case):
    want = json.loads(FIXTURE.read_text())[case]
    got = record(case)
    first = next((k for k, (x, y) in enumerate(zip(got["steps"], want["steps"])) if x != y), None)
    assert first is None and len(got["steps"]) == len(want["steps"]), f"{case}: differs from step {first}"
    assert got["actions"] == want["actions"]
    assert same(got["reward_sum"], want["reward_sum"])
    assert same(got["episodes"], want["episodes"]) and got["episodes"], case


def test_the_recording_exercises_every_kind_of_step():
    """Spreads placed, requests rejected with room and without, episodes ended, slots outgrown."""
    data = json.loads(FIXTURE.read_text())
    C = {w: MultiClusterConfig(**{k: v for k, v in WORLDS[w].items() if k != "inventory"}).clusters for w in WORLDS}
    spreads = sum(a >= C[case.split("/")[1]] and a < C[case.split("/")[1]] + 3
                  for case in data if case.startswith("gym/") for a in data[case]["actions"])
    assert spreads > 100
    assert all(len(data[f"gym/{w}"]["episodes"]) >= 2 for w in WORLDS)
    assert _play_vector("paper-16-long-lived")[1].dep.shape[1] > 64  # the running requests outgrew the first slots


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    lines = [f"{json.dumps(case)}: {json.dumps(record(case))}" for case in CASES]  # a case a line
    FIXTURE.write_text("{\n" + ",\n".join(lines) + "\n}\n")
    print(f"{FIXTURE}: {len(CASES)} trajectories")
