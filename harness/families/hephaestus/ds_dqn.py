"""DS-DQN (HephaestusForge, paper 001): DQN over a DeepSets Q-network (``harness.families.hephaestus.deepsets``: one
Q-value per action row, so a model trained on C clusters runs on any other C) in the multi-cluster
world.

The hyperparameters are the authors' code's (``dqn_deepset.py``; the paper gives none): 8
environments stepped together, lr 2.5e-4, a replay buffer of 10,000 transitions, γ 0.99, a batch
of 128 every 10 steps once 10,000 steps have passed, the target network copied every 500 steps
(τ 1), ε from 1 to 0.05 over the first half of training; exploration picks among allowed actions
and the greedy choice is the best allowed one (eq. 3). As in their code, a step is one step of
every environment, and the bootstrap target is the best Q-value over *every* action of the next
state, allowed or not (``masked_target=True``: over the allowed ones). Observations are scaled
as DS-PPO's (``ds_ppo.obs_tensor``).
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

from harness.families.hephaestus.ds_ppo import act, make_envs, obs_tensor
from harness.families.hephaestus.deepsets import DeepSetActor
from harness.families.hephaestus.world import FEATURES, MultiClusterConfig

__all__ = ["DsDqnArgs", "train", "act"]  # act: the best allowed action, as DS-PPO's actor


@dataclass
class DsDqnArgs:
    total_steps: int = 200_000  # steps of all ``envs`` together (the code's loop): envs × total_steps transitions
    envs: int = 8
    lr: float = 2.5e-4
    buffer: int = 10_000
    gamma: float = 0.99
    batch: int = 128
    train_every: int = 10
    learning_starts: int = 10_000
    target_every: int = 500
    eps_start: float = 1.0
    eps_end: float = 0.05
    explore_fraction: float = 0.5
    masked_target: bool = False
    batched: bool = True  # the envs as one MultiClusterVector (×1.15-1.32 here); --no-batched: N scalar envs in a loop
    seed: int = 1


def train(cfg: MultiClusterConfig, args: DsDqnArgs, on_progress: Callable[[int, float], None] | None = None):
    """(Q-network, None, seconds) after ``args.total_steps`` steps of every environment."""
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    envs = make_envs(cfg, args.envs, args.seed, args.batched)
    obs = obs_tensor(envs.reset())
    mask = torch.from_numpy(envs.action_masks())
    q = DeepSetActor(FEATURES)
    target = copy.deepcopy(q)
    opt = torch.optim.Adam(q.parameters(), lr=args.lr)
    rows = cfg.clusters + 4
    size = args.buffer
    b_obs, b_next = torch.zeros(size, rows, FEATURES), torch.zeros(size, rows, FEATURES)
    b_next_mask = torch.zeros(size, rows, dtype=torch.bool)
    b_act, b_rew, b_done = torch.zeros(size, dtype=torch.long), torch.zeros(size), torch.zeros(size)
    filled, at = 0, 0
    t0, returns, ep_ret = time.monotonic(), [], np.zeros(args.envs)
    for step in range(args.total_steps):
        eps = max(args.eps_end, args.eps_start + (args.eps_end - args.eps_start) * step /
                  (args.explore_fraction * args.total_steps))
        with torch.no_grad():
            greedy = torch.where(mask, q(obs), torch.full((args.envs, rows), -1e8)).argmax(dim=1)
        explore = rng.random(args.envs) < eps
        actions = [int(rng.choice(np.flatnonzero(mask[k].numpy()))) if explore[k] else int(greedy[k])
                   for k in range(args.envs)]
        nxt, rew, ended, _ = envs.step(np.asarray(actions))  # a finished env's next observation is its new episode's
        rew, done = rew.astype(np.float32), ended.astype(np.float32)
        ep_ret += rew
        for k in np.flatnonzero(ended):
            returns.append(ep_ret[k])
            ep_ret[k] = 0.0
        next_obs = obs_tensor(nxt)
        next_mask = torch.from_numpy(envs.action_masks())
        for k in range(args.envs):  # the replay buffer, a ring
            b_obs[at], b_next[at], b_next_mask[at] = obs[k], next_obs[k], next_mask[k]
            b_act[at], b_rew[at], b_done[at] = actions[k], float(rew[k]), float(done[k])
            at, filled = (at + 1) % size, min(filled + 1, size)
        obs, mask = next_obs, next_mask
        if step > args.learning_starts and step % args.train_every == 0:
            idx = torch.from_numpy(rng.integers(0, filled, args.batch))
            with torch.no_grad():
                nq = target(b_next[idx])
                if args.masked_target:
                    nq = torch.where(b_next_mask[idx], nq, torch.full_like(nq, -1e8))
                y = b_rew[idx] + args.gamma * nq.max(dim=1).values * (1 - b_done[idx])
            loss = torch.nn.functional.mse_loss(q(b_obs[idx]).gather(1, b_act[idx, None]).squeeze(1), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        if step % args.target_every == 0:
            target.load_state_dict(q.state_dict())
        if on_progress and returns and step % 1000 == 0:
            on_progress(step * args.envs, float(np.mean(returns[-50:])))
    return q, None, time.monotonic() - t0
