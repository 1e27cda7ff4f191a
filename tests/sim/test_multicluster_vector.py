"""The batched multi-cluster world (``harness.families.hephaestus.world_vector``) is the scalar world's rules
for N environments: the same state gives the same decisions, and the same policy the same
episode measures (the random streams differ, so those are compared as distributions)."""

from __future__ import annotations

import numpy as np
import pytest

from harness.families.hephaestus.world import EXTRA_ROWS, MultiClusterConfig, MultiClusterEnv
from harness.families.hephaestus.world_vector import MultiClusterVector
from tests.conftest import REPO


def copy_states(vec: MultiClusterVector, envs: list[MultiClusterEnv]) -> None:
    for i, e in enumerate(envs):
        for a in ("cap_cpu", "cap_mem", "cost", "alloc_cpu", "alloc_mem", "lat"):
            getattr(vec, a)[i] = getattr(e, a)
        q = e.request
        vec.r[i], vec.cpu[i], vec.mem[i], vec.threshold[i], vec.t_r[i] = q.replicas, q.cpu, q.mem, q.threshold, q.t_r


@pytest.mark.parametrize("compat", [False, True])
def test_the_same_state_gives_the_same_masks_splits_and_observation(compat):
    cfg = MultiClusterConfig(hf_compat=compat)
    rng = np.random.default_rng(5)
    envs = []
    for k in range(150):  # states along random episodes: clusters filling up, every request size
        e = MultiClusterEnv(cfg, seed=k)
        for _ in range(int(rng.integers(0, 60))):
            e.step(int(rng.choice(np.flatnonzero(e.action_masks()))))
        envs.append(e)
    vec = MultiClusterVector(cfg, len(envs), seed=0)
    copy_states(vec, envs)
    assert np.array_equal(vec.action_masks(), np.stack([e.action_masks() for e in envs]))
    assert np.allclose(vec.observation(), np.stack([e.observation() for e in envs]))
    placed_by_spread = 0
    for action in range(cfg.clusters + EXTRA_ROWS):
        split, ok = vec.split_of(np.full(len(envs), action))
        for i, e in enumerate(envs):
            want = e.split_of(action)
            assert ok[i] == (want is not None), (action, i)
            if want is not None:
                assert np.array_equal(split[i], want), (action, i)
                placed_by_spread += action >= cfg.clusters
    assert placed_by_spread > 100  # the spreads were exercised, not only rejected


def binpack_or_ffd(masks: np.ndarray, alloc: np.ndarray, cap: np.ndarray, C: int) -> np.ndarray:
    """The most CPU-allocated cluster with room, else the FFD spread: one rule for both worlds."""
    share = np.where(masks[:, :C], alloc / cap, -np.inf)
    return np.where(masks[:, :C].any(axis=1), share.argmax(axis=1), C)


@pytest.mark.parametrize("cfg", [MultiClusterConfig(hf_compat=True), MultiClusterConfig(arrival_rate=10),
                                 MultiClusterConfig(inventory=str(REPO / "inventories/hephaestus-local.yaml"),
                                                    arrival_rate=10)], ids=["code", "paper", "sites"])
def test_the_same_policy_gives_the_same_episode_measures(cfg):
    episodes = 200
    scalar = MultiClusterEnv(cfg, seed=1)
    C = scalar.cfg.clusters
    for _ in range(episodes):
        scalar.reset()
        done = False
        while not done:
            m = scalar.action_masks()[None]
            a = binpack_or_ffd(m, scalar.alloc_cpu[None], scalar.cap_cpu[None], C)[0]
            _, _, done, _ = scalar.step(int(a))
    vec = MultiClusterVector(cfg, 50, seed=2)
    vec.reset()
    while len(vec.finished) < episodes:
        vec.step(binpack_or_ffd(vec.action_masks(), vec.alloc_cpu, vec.cap_cpu, C))
    for key in ("rejection", "cost", "latency", "gini"):
        a = np.array([r[key] for r in scalar.finished], float)
        b = np.array([r[key] for r in vec.finished[:episodes]], float)
        a, b = a[~np.isnan(a)], b[~np.isnan(b)]
        se = np.sqrt(a.var() / len(a) + b.var() / len(b))
        assert abs(a.mean() - b.mean()) <= max(4 * se, 1e-9), (key, a.mean(), b.mean())
