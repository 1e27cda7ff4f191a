"""DS-PPO (HephaestusForge, paper 001): PPO over DeepSets (``harness.families.hephaestus.deepsets``) in the
multi-cluster world (``harness.families.hephaestus.world``), one logit per action row.

The hyperparameters are the authors' code's (the paper gives none): lr 2.5e-4, γ 0.95, GAE λ
0.97, clip 0.2, value coefficient 0.5, entropy 0.001 (run.py's), 4 epochs, 8 minibatches, 100
steps per environment per update, max gradient norm 0.5, 200,000 steps. Actions are sampled
under the mask (the paper's eq. 3); ``unmasked=True`` samples as the authors' code does (the mask
only in the update). Observations are scaled by fixed constants (cores and GB by 32, latency and
thresholds by 1000), a choice of harness's: the code feeds raw values.

``harness train --policy ds-ppo`` trains it (``harness.policies.world_learners``); on the one
ground a model acts as the ``ds-ppo`` placer (``harness.families.hephaestus.admission``), through
``load_actor`` and ``act``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

from harness.families.hephaestus.deepsets import DeepSetActor, DeepSetCritic
from harness.rl.nets import masked_categorical
from harness.rl.ppo import gae
from harness.families.hephaestus.world import FEATURES, MultiClusterConfig, MultiClusterEnv

SCALE = np.array([32, 32, 32, 32, 1000, 32, 32, 32, 1000, 1], np.float32)  # per feature of a row


@dataclass
class DsPpoArgs:
    total_steps: int = 200_000
    envs: int = 8
    steps: int = 100  # per environment per update
    lr: float = 2.5e-4
    gamma: float = 0.95
    gae_lambda: float = 0.97
    clip: float = 0.2
    vf_coef: float = 0.5
    ent_coef: float = 0.001
    epochs: int = 4
    minibatches: int = 8
    max_grad_norm: float = 0.5
    unmasked: bool = False
    batched: bool = False  # --batched: the envs as one MultiClusterVector; measured no faster for PPO's 8 envs (benchmarks.ds_training_speed)
    seed: int = 1


def obs_tensor(obs) -> torch.Tensor:
    rows = np.stack(obs).astype(np.float32)
    return torch.from_numpy(np.where(rows == -1, -1.0, rows / SCALE))


class ScalarEnvs:
    """N scalar environments stepped one after another, each reset when its episode ends: the
    face of :class:`~harness.families.hephaestus.world_vector.MultiClusterVector` (``batched=False``)."""

    def __init__(self, cfg: MultiClusterConfig, n: int, seed: int):
        self.envs = [MultiClusterEnv(cfg, seed=seed * 1000 + k) for k in range(n)]

    def reset(self) -> np.ndarray:
        return np.stack([e.reset() for e in self.envs])

    def action_masks(self) -> np.ndarray:
        return np.stack([e.action_masks() for e in self.envs])

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict]:
        obs, reward, done = [], np.zeros(len(self.envs)), np.zeros(len(self.envs), bool)
        for k, e in enumerate(self.envs):
            o, reward[k], done[k], _ = e.step(int(actions[k]))
            obs.append(e.reset() if done[k] else o)  # as the vector env: the next episode's first observation
        return np.stack(obs), reward, done, {}


def make_envs(cfg: MultiClusterConfig, n: int, seed: int, batched: bool):
    """The ``n`` environments a learner steps: one batched vector (fast), or ``n`` scalar ones."""
    from harness.families.hephaestus.world_vector import MultiClusterVector

    return MultiClusterVector(cfg, n, seed=seed) if batched else ScalarEnvs(cfg, n, seed)


def train(cfg: MultiClusterConfig, args: DsPpoArgs, on_progress: Callable[[int, float], None] | None = None):
    """(actor, critic, seconds) after ``args.total_steps`` steps."""
    torch.manual_seed(args.seed)
    envs = make_envs(cfg, args.envs, args.seed, args.batched)
    obs = envs.reset()
    actor, critic = DeepSetActor(FEATURES), DeepSetCritic(FEATURES)
    opt = torch.optim.Adam(list(actor.parameters()) + list(critic.parameters()), lr=args.lr, eps=1e-5)
    n, T = args.envs, args.steps
    rows = cfg.clusters + 4
    t0, done_steps, returns = time.monotonic(), 0, []
    ep_ret = np.zeros(n)
    while done_steps < args.total_steps:
        b_obs = torch.zeros(T, n, rows, FEATURES)
        b_mask = torch.zeros(T, n, rows, dtype=torch.bool)
        b_act, b_logp, b_rew, b_done, b_val = (torch.zeros(T, n, dtype=d) for d in
                                                (torch.long, torch.float32, torch.float32, torch.float32, torch.float32))
        for t in range(T):
            x = obs_tensor(obs)
            mask = torch.from_numpy(envs.action_masks())
            with torch.no_grad():
                logits, value = actor(x), critic(x)
                dist = masked_categorical(logits, torch.ones_like(mask) if args.unmasked else mask)
                action = dist.sample()
            b_obs[t], b_mask[t], b_act[t], b_logp[t], b_val[t] = x, mask, action, dist.log_prob(action), value
            obs, reward, done, _ = envs.step(action.numpy())
            ep_ret += reward
            b_rew[t], b_done[t] = torch.from_numpy(reward.astype(np.float32)), torch.from_numpy(done.astype(np.float32))
            for k in np.flatnonzero(done):
                returns.append(ep_ret[k])
                ep_ret[k] = 0.0
        with torch.no_grad():
            next_val = critic(obs_tensor(obs))
        adv, ret = gae(b_rew, b_val, b_done, next_val, args.gamma, args.gae_lambda)
        f = lambda a: a.reshape(T * n, *a.shape[2:])  # noqa: E731
        o_, m_, a_, lp_, adv_, ret_ = f(b_obs), f(b_mask), f(b_act), f(b_logp), f(adv), f(ret)
        size = T * n // args.minibatches
        for _ in range(args.epochs):
            perm = torch.randperm(T * n)
            for i in range(args.minibatches):
                idx = perm[i * size:(i + 1) * size]
                dist = masked_categorical(actor(o_[idx]), m_[idx])
                ratio = (dist.log_prob(a_[idx]) - lp_[idx]).exp()
                a = adv_[idx]
                a = (a - a.mean()) / (a.std() + 1e-8)
                pg = torch.max(-a * ratio, -a * ratio.clamp(1 - args.clip, 1 + args.clip)).mean()
                v = ((critic(o_[idx]) - ret_[idx]) ** 2).mean() * 0.5
                loss = pg + args.vf_coef * v - args.ent_coef * dist.entropy().mean()
                opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(list(actor.parameters()) + list(critic.parameters()), args.max_grad_norm)
                opt.step()
        done_steps += T * n
        if on_progress and returns:
            on_progress(done_steps, float(np.mean(returns[-50:])))
    return actor, critic, time.monotonic() - t0


def load_actor(path) -> tuple[DeepSetActor, dict]:
    """(the network, its metadata) of a DS-PPO or DS-DQN model file (``harness train``'s)."""
    from harness.errors import UserError
    from harness.rl.acting import load_model

    net, meta = load_model(path, lambda meta: DeepSetActor(FEATURES))
    if meta.get("policy") not in ("ds-ppo", "ds-dqn"):
        raise UserError(f"a {meta.get('policy')} model, not a DS-PPO or DS-DQN one", source=str(path))
    return net, meta


def training_world(meta: dict) -> MultiClusterConfig:
    """The world a model's metadata says it was trained in."""
    world = {k: v for k, v in meta.get("world_config", {}).items() if k in MultiClusterConfig.__dataclass_fields__}
    return MultiClusterConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in world.items()})


def act(actor: DeepSetActor, env: MultiClusterEnv) -> int:
    """The most likely allowed action."""
    with torch.no_grad():
        logits = actor(obs_tensor([env.observation()]))[0]
    mask = torch.from_numpy(env.action_masks())
    return int(torch.where(mask, logits, torch.full_like(logits, -1e9)).argmax())
