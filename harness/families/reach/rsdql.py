"""RSDQL adapted to rescheduling, as REACH did (§VI-D, Table V): DQN with a replay buffer, a
three-layer Q network, linear epsilon-greedy exploration over the first 10 % of training, and
a target network copied whole (soft-update coefficient 1). Invalid actions are masked when
acting and in the bootstrap max, as for REACH, so both agents see the same environment;
``--unmasked`` trains it as the paper's DQN is (Stable-Baselines3's, which has no mask): any
action may be taken, an invalid one ends the episode with CEEnv's ``invalid_penalty``, and the
model acts so (an invalid choice is no move)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from harness.policies import register
from harness.policies.learned import CEEnvPolicy
from harness.rl.curves import ReturnTracker
from harness.sim.ceenv import CEEnvVector, Dynamics
from harness.spec.args import arg


@dataclass
class RsdqlArgs:
    model: str | None = arg(None, "a trained model to act with")
    total_steps: int = arg(300_000, "environment steps to train for")
    num_envs: int = arg(16, "CEEnv environments stepped together")
    learning_rate: float = arg(3e-4, "Adam learning rate (Table V)")
    gamma: float = arg(0.99, "discount (Table V)")
    batch_size: int = arg(64, "replay minibatch (Table V)")
    buffer_size: int = arg(100_000, "replay buffer capacity")
    exploration_fraction: float = arg(0.1, "share of training over which epsilon falls linearly")
    start_epsilon: float = arg(1.0, "epsilon at the start")
    end_epsilon: float = arg(0.05, "epsilon after the exploration fraction")
    learning_starts: int = arg(5_000, "environment steps before the first gradient step")
    target_every: int = arg(500, "gradient steps between target network copies (tau = 1)")
    hidden: int = arg(64, "units per hidden layer of the Q network")
    seed: int = arg(1, "seed of the environments and the network")
    unmasked: bool = arg(False, "no action mask, as the paper's DQN (Stable-Baselines3's): invalid actions are "
                                "taken and penalised (CEEnv's invalid_penalty) in training, and are no move when acting")

    def validate(self):
        if not 0 < self.exploration_fraction <= 1:
            raise ValueError("exploration_fraction must be in (0, 1]")


def make_q(obs_dim: int, n_actions: int, hidden: int):
    from harness.rl.nets import mlp

    return mlp(obs_dim, n_actions, hidden, 3)


def train(dyn: Dynamics, args: RsdqlArgs, on_progress: Callable[[int, float], None] | None = None):
    import torch

    from harness.rl.nets import MASKED

    torch.manual_seed(args.seed)
    # networks of a few thousand weights: one thread is fastest (2 threads on 2 cores ran 4x slower
    # beside another process), and leaves the other core to the environment and the OS
    torch.set_num_threads(1)
    rng = np.random.default_rng(args.seed)
    envs = CEEnvVector(args.num_envs, dyn=dyn)
    q, target = make_q(dyn.obs_dim, dyn.n_actions, args.hidden), make_q(dyn.obs_dim, dyn.n_actions, args.hidden)
    target.load_state_dict(q.state_dict())
    opt = torch.optim.Adam(q.parameters(), lr=args.learning_rate, foreach=True)  # one kernel for all weights
    cap, B = args.buffer_size, args.num_envs
    buf = {"obs": np.zeros((cap, dyn.obs_dim), np.float32), "next": np.zeros((cap, dyn.obs_dim), np.float32),
           "next_mask": np.zeros((cap, dyn.n_actions), bool), "act": np.zeros(cap, np.int64),
           "rew": np.zeros(cap, np.float32), "done": np.zeros(cap, np.float32)}
    size = ptr = grads = 0
    returns = ReturnTracker(B)
    curve, start = [], time.monotonic()
    obs, info = envs.reset(seed=args.seed)
    allowed = (lambda m: np.ones_like(m)) if args.unmasked else (lambda m: m)  # what acting and the bootstrap may pick
    mask = allowed(info["action_mask"])
    iterations = args.total_steps // B
    report_every = max(1, iterations // 100)
    for it in range(1, iterations + 1):
        steps = it * B
        eps = max(args.end_epsilon, args.start_epsilon - (args.start_epsilon - args.end_epsilon)
                  * steps / (args.exploration_fraction * args.total_steps))
        with torch.no_grad():
            qv = torch.where(torch.as_tensor(mask), q(torch.as_tensor(obs)), torch.tensor(MASKED))
        greedy = qv.argmax(1).numpy()
        explore = rng.random(B) < eps
        actions = np.array([rng.choice(np.flatnonzero(m)) if e else g for m, e, g in zip(mask, explore, greedy)])
        nobs, r, term, trunc, info = envs.step(actions)  # after the same-step reset; a done transition does not bootstrap
        nmask = allowed(info["action_mask"])
        idx = (ptr + np.arange(B)) % cap
        buf["obs"][idx], buf["act"][idx], buf["rew"][idx] = obs, actions, r
        buf["next"][idx], buf["next_mask"][idx], buf["done"][idx] = nobs, nmask, (term | trunc)
        ptr, size = (ptr + B) % cap, min(cap, size + B)
        returns.add(r, term | trunc)
        obs, mask = nobs, nmask
        if steps >= args.learning_starts:
            j = rng.integers(0, size, args.batch_size)
            o, a = torch.as_tensor(buf["obs"][j]), torch.as_tensor(buf["act"][j])
            with torch.no_grad():
                nq = torch.where(torch.as_tensor(buf["next_mask"][j]), target(torch.as_tensor(buf["next"][j])),
                                 torch.tensor(MASKED)).max(1).values
                y = torch.as_tensor(buf["rew"][j]) + args.gamma * nq * (1 - torch.as_tensor(buf["done"][j]))
            loss = torch.nn.functional.smooth_l1_loss(q(o).gather(1, a[:, None]).squeeze(1), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            grads += 1
            if grads % args.target_every == 0:
                target.load_state_dict(q.state_dict())
        if it % report_every == 0 or it == iterations:
            curve.append((steps, round(returns.mean(), 3), round(time.monotonic() - start, 2)))
            if on_progress:
                on_progress(steps, returns.mean())
    return q, curve


COMMITTED = ["--total-steps", "1000000", "--failed-at-start", "0.5", "--large-share", "0.25"]


@register
class Rsdql(CEEnvPolicy):
    """RSDQL as REACH adapted it: one move per decision, the valid action of highest Q-value."""

    name = "rsdql"
    description = "RSDQL: DQN with replay over CEEnv, as REACH's baseline (a trained model)"
    Args = RsdqlArgs
    recipes = {
        # how the committed models were made (`make rsdql-models`, with --seed 2): Table V's DQN in
        # the world REACH's committed models were trained in (half the episodes after a node
        # failure, a quarter at the largest deployment), 1 M steps (62,500 gradient steps of 64)
        "committed": COMMITTED,
        # what model=auto trains with (issue 62), in about a minute here: the same world, 600 k steps
        # of 128 environments, one gradient step of 512 per step of them (the same 4 replayed
        # samples per environment step, 4,700 gradient steps) at a learning rate of 1e-3 (Table V:
        # 3e-4), the target network copied every 63 gradient steps (as often in environment steps).
        # On Chain, seeds 1-3, scenarios 0-9 at 4/12/20 pods: no worse than the committed model
        # (-0.6, -3.8, +1.9 %), 37 s each (studies.reach.train_speed --policy rsdql; studies/reach)
        "fast": ["--total-steps", "600000", "--num-envs", "128", "--batch-size", "512", "--learning-rate", "0.001",
                 "--target-every", "63", "--failed-at-start", "0.5", "--large-share", "0.25"],
        # Table V's DQN for 3 M steps with no action mask (§VII-A; Stable-Baselines3's DQN, which
        # Table V's names suggest, has none), in the committed models' world; 7-18 minutes here.
        # In CEEnv, where every invalid choice ends the episode, it learns to choose Idle (studies/reach)
        "paper": ["--total-steps", "3000000", "--unmasked", "--failed-at-start", "0.5", "--large-share", "0.25"],
    }

    @classmethod
    def make_net(cls, meta: dict):
        return make_q(meta["obs_dim"], meta["n_actions"], meta["args"]["hidden"])

    @staticmethod
    def score(qnet, obs):
        return qnet(obs)

    train = staticmethod(train)
