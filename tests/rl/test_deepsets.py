"""DeepSets (paper 001): a permutation of the rows permutes the logits and leaves the value; one
network acts on any number of rows; DS-PPO learns the cost objective in its world."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from harness.families.hephaestus.deepsets import DeepSetActor, DeepSetCritic


def test_the_actor_is_permutation_equivariant_and_the_critic_invariant_for_any_set_size():
    torch.manual_seed(0)
    actor, critic = DeepSetActor(10), DeepSetCritic(10)
    for rows in (8, 12, 36):  # 4, 8, 32 clusters + 4 rows
        x = torch.randn(2, rows, 10)
        perm = torch.randperm(rows)
        assert torch.allclose(actor(x)[:, perm], actor(x[:, perm]), atol=1e-5)
        assert torch.allclose(critic(x), critic(x[:, perm]), atol=1e-5)
        assert actor(x).shape == (2, rows)


def mean_cost(net, cfg, act) -> float:
    """40 test episodes of the cost objective, every action checked against the mask."""
    from harness.families.hephaestus.world import MultiClusterEnv

    env = MultiClusterEnv(cfg, seed=123)
    for _ in range(40):
        env.reset()
        done = False
        while not done:
            a = act(net, env)
            assert env.action_masks()[a]
            _, _, done, _ = env.step(a)
    return float(np.nanmean([r["cost"] for r in env.finished]))


def test_ds_ppo_learns_cheaper_placements_than_it_started_with():
    from harness.families.hephaestus.ds_ppo import DsPpoArgs, act, train
    from harness.families.hephaestus.world import FEATURES, MultiClusterConfig

    torch.set_num_threads(1)
    cfg = MultiClusterConfig(objective="cost", hf_compat=True)
    torch.manual_seed(1)
    untrained = mean_cost(DeepSetActor(FEATURES), cfg, act)
    actor, _, _ = train(cfg, DsPpoArgs(total_steps=16_000, seed=1))
    trained = mean_cost(actor, cfg, act)
    assert trained < 0.8 * untrained, (trained, untrained)


def test_ds_dqn_learns_cheaper_placements_than_it_started_with_and_acts_only_as_allowed():
    from harness.families.hephaestus.ds_dqn import DsDqnArgs, act, train
    from harness.families.hephaestus.world import FEATURES, MultiClusterConfig

    torch.set_num_threads(1)
    cfg = MultiClusterConfig(objective="cost", hf_compat=True)
    torch.manual_seed(1)
    untrained = mean_cost(DeepSetActor(FEATURES), cfg, act)
    q, _, _ = train(cfg, DsDqnArgs(total_steps=4_000, learning_starts=500, explore_fraction=0.3, seed=1))
    trained = mean_cost(q, cfg, act)
    assert trained < 0.8 * untrained, (trained, untrained)


@pytest.mark.parametrize("batched", [True, False])
def test_both_learners_step_a_batched_vector_or_scalar_envs_alike(batched):
    from harness.families.hephaestus import ds_dqn, ds_ppo
    from harness.families.hephaestus.world import MultiClusterConfig

    cfg = MultiClusterConfig(hf_compat=True, episode_steps=20)
    envs = ds_ppo.make_envs(cfg, 3, seed=1, batched=batched)
    obs = envs.reset()
    assert obs.shape == (3, cfg.clusters + 4, 10) and envs.action_masks().shape == (3, cfg.clusters + 4)
    ended = np.zeros(3, int)
    for _ in range(45):  # episodes of 20 steps: every env ends twice and starts again
        obs, reward, done, _ = envs.step(np.full(3, cfg.clusters + 3))  # reject
        ended += done
    assert list(ended) == [2, 2, 2] and obs.shape == (3, cfg.clusters + 4, 10)
    seen = []
    ds_ppo.train(cfg, ds_ppo.DsPpoArgs(total_steps=200, envs=2, steps=50, minibatches=2, batched=batched),
                 lambda step, ret: seen.append(step))
    ds_dqn.train(cfg, ds_dqn.DsDqnArgs(total_steps=60, envs=2, learning_starts=20, batch=8, batched=batched))
    assert seen and seen[-1] == 200
