"""RSDQL as SIL-GPO's authors ran it (paper 002's third baseline; ``NEW_PPO/DQN.py`` at 17451c5):
a DQN over the same graph-attention encoders (``harness.families.silgpo.gat``, a Q-value per server) in the
same service-graph world, reward and routing. harness's ``rsdql`` is another thing: REACH's
baseline, one move per step of a rescheduling loop.

The code's settings: Adam at 1e-4; ε-greedy from 1.0 to 0.01, ×0.999 per episode; a learning
step every 10 environment steps on 128 transitions from a ring of 5 episodes' size; the target
network copied from the online one after each learning step; γ 0.9; raw rewards; a greedy test
episode after every training episode, on the training env (so the final reward's "previous
episode" is the greedy one's), recorded every 10th. Departures:

- the code keeps the model of the best evaluation by reward; harness keeps the best by total
  delay, which is what is compared;
- the code's target maxes the next state's Q-values over the *current* transition's mask;
  harness uses the next state's own mask;
- exploring, the code's ``np.where(action_mask == 1)`` compares a Python list with 1, finds no
  server, and so explores with server 0 always, placed even where the instance does not fit
  (numpy 1.x; numpy 2 raises); harness explores uniformly over the servers where it fits, and
  never places a misfit.

No reward sharing, the "RS" of RSDQL, is in the code, and none is here.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

from harness.families.silgpo.agent import Curve
from harness.rl.checkpoint import EVERY as CHECKPOINT_EVERY, random_state, restore_random
from harness.families.silgpo.gat import COMPILE_HELP, check_compile, for_speed
from harness.families.silgpo.env import DeployEnv
from harness.families.silgpo.world import ServiceGraph
from harness.spec.args import arg


@dataclass
class RsdqlDeployArgs:
    episodes: int = 2000
    lr: float = 1e-4
    gamma: float = 0.9
    eps_start: float = 1.0
    eps_end: float = 0.01
    eps_decay: float = 0.999
    learn_every: int = 10
    batch: int = 128
    buffer_episodes: int = 5
    evaluate_every: int = 10
    encoder: str = "gat"
    seed: int = 1
    compile: str = arg("auto", COMPILE_HELP)

    def __post_init__(self):
        check_compile(self.compile)


def _q(net, observations: list[dict], masks: np.ndarray) -> torch.Tensor:
    from harness.families.silgpo.gat import collate

    return net(collate(observations)).masked_fill(~torch.as_tensor(masks), -torch.inf)


def greedy(net, env: DeployEnv, obs: dict) -> int:
    with torch.no_grad():
        return int(_q(net, [obs], env.action_masks()[None]).argmax())


def deploy(g: ServiceGraph, net) -> np.ndarray:
    env = DeployEnv(g)
    _greedy_episode(net, env)
    return env.X


def _greedy_episode(net, env: DeployEnv) -> float:
    """A greedy episode in ``env`` (which carries its final delay into the next episode's
    reward, as every episode does); its total delay."""
    obs = env.reset()
    while not env.done:
        obs = env.step(greedy(net, env, obs))[0]
    return env.current


def new_net(g: ServiceGraph, encoder: str):
    """The Q-network for world ``g``: the SIL-GPO encoders, one Q-value per server."""
    from harness.families.silgpo.gat import SilGpoNet

    return SilGpoNet(g.N, g.S, g.N, encoder)


def load_net(path, g: ServiceGraph):
    """(the Q-network, its metadata) of an RSDQL model file (``harness train --policy
    rsdql-deploy``), for world ``g``."""
    from harness.errors import UserError
    from harness.rl.acting import load_model

    def make(meta: dict):
        if meta.get("policy") != "rsdql-deploy":
            raise UserError(f"a {meta.get('policy')} model, not an rsdql-deploy one", source=str(path))
        return new_net(g, meta["args"]["encoder"])
    return load_model(path, make)


def train(g: ServiceGraph, args: RsdqlDeployArgs, on_progress: Callable[[int, float], None] | None = None,
          checkpoint: Callable[[dict], None] | None = None, start: dict | None = None):
    """(the network of the best evaluation, Curve, seconds). ``checkpoint``/``start``: the whole
    training state every ``CHECKPOINT_EVERY`` episodes, and going on from one, as
    ``silgpo.train`` does."""
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    env = DeployEnv(g)
    net = new_net(g, args.encoder)
    target = copy.deepcopy(net)
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    ring: list[tuple] = []
    size, steps, eps = args.buffer_episodes * env.steps, 0, args.eps_start
    best, best_delay, curve, t0, first, spent = copy.deepcopy(net), np.inf, Curve(), time.monotonic(), 1, 0.0
    if start is not None:
        for module, key in ((net, "net"), (target, "target"), (best, "best"), (opt, "opt")):
            module.load_state_dict(start[key])
        restore_random(rng, start)
        env.carry(start["env"])
        ring, steps, eps, best_delay, curve = start["ring"], start["steps"], start["eps"], start["best_delay"], start["curve"]
        first, spent = start["episode"] + 1, start["seconds"]
    fast_net, fast_target = for_speed((net, target), args.compile, args.encoder)
    for episode in range(first, args.episodes + 1):
        obs = env.reset()
        while not env.done:
            mask = env.action_masks()
            a = int(rng.choice(np.flatnonzero(mask))) if rng.random() < eps else greedy(fast_net, env, obs)
            nxt, r, done, _ = env.step(a)
            item = (obs, a, r, nxt, done, env.action_masks() if not done else np.ones(g.N, bool))
            if len(ring) < size:
                ring.append(item)
            else:
                ring[steps % size] = item
            obs, steps = nxt, steps + 1
            if steps % args.learn_every == 0 and len(ring) >= args.batch:
                _learn(fast_net, fast_target, opt, [ring[i] for i in rng.choice(len(ring), args.batch, replace=False)], args)
                target.load_state_dict(net.state_dict())
        eps = max(args.eps_end, eps * args.eps_decay)
        now = _greedy_episode(fast_net, env)  # the code tests after every episode, on the training env
        if episode % args.evaluate_every == 0:
            if now < best_delay:
                best, best_delay = copy.deepcopy(net), now
            curve.episodes.append(episode)
            curve.delay.append(now)
            curve.sil_on.append(False)
            if on_progress:
                on_progress(episode, now)
        if checkpoint is not None and episode % CHECKPOINT_EVERY == 0:
            checkpoint({"episode": episode, "net": net.state_dict(), "target": target.state_dict(),
                        "best": best.state_dict(), "opt": opt.state_dict(), **random_state(rng),
                        "env": env.carried(), "ring": ring, "steps": steps,
                        "eps": eps, "best_delay": best_delay, "curve": curve,
                        "seconds": spent + time.monotonic() - t0})
    return best, curve, spent + time.monotonic() - t0


def _learn(net, target, opt, batch: list[tuple], args: RsdqlDeployArgs) -> float:
    obs, actions, rewards, nxt, dones, next_masks = zip(*batch)
    q = _q(net, list(obs), np.ones((len(obs), len(next_masks[0])), bool)).gather(
        1, torch.as_tensor(actions)[:, None]).squeeze(1)
    with torch.no_grad():
        best_next = _q(target, list(nxt), np.stack(next_masks)).max(dim=1).values
        done = torch.as_tensor(dones, dtype=torch.float32)
        y = torch.as_tensor(rewards, dtype=torch.float32) + args.gamma * torch.where(done > 0, 0.0, best_next)
    loss = torch.nn.functional.mse_loss(q, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return float(loss.detach())
