"""SIL-GPO (paper 002): PPO with self-imitation over graph-attention encodings
(``harness.families.silgpo.gat``) in the service-graph world (``harness.families.silgpo.env``): one instance per
step, on a server where it fits.

The settings are Table II's and, where the paper gives none, the authors' code's
(``NEW_PPO/Agent.py``, ``main.py``, ``Arguments.py`` at 17451c5): separate actor and critic, Adam
(eps 1e-5) at 5e-5 and 1e-5 decayed linearly to 0 over 20,000 episodes, γ 0.9, GAE λ 0.95, clip
0.2, entropy 0.05, 5 epochs over a batch of 5 episodes in minibatches of one episode's size,
gradient norms clipped at 0.5, rewards divided by the running std of the discounted return
(reset each episode), every 5th episode acted by argmax, and the critic trained on the one-step
target r + γV(s'). Self-imitation (eqs. 61-64, weight 0.2): after each update's batch, an
episode whose sum of discounted returns reaches 0.9 × the best so far puts its steps of
positive return in a ring of 5 episodes' size; each minibatch step adds the SIL losses on half
an episode's worth of them. The code's on/off rule (``sil="auto"``): a greedy evaluation every
10 episodes; SIL switches on when it is 5 or more above the best evaluation, and, once on, off
only when an evaluation is at or below the best again. ``sil="on"``/``"off"`` fix it.

One departure is the paper's against the code: the code detaches V(s) in the SIL value loss
(eq. 62), so that loss trains nothing; ``sil_critic_grad=True`` (the default, the paper's eq. 62
as Oh et al. write it) lets it train the critic, ``False`` is the code. Two are harness's: the
code decays the learning rates after each minibatch (so an update's first minibatch runs at the
previous rate), harness once before each update (a relative difference of about 2.5e-4); and
SIL is skipped while the ring holds fewer than half an episode's steps, where the code's
``random.sample`` would fail.

Not yet a registered policy on the one ground (its world is the service-graph deployment, not
a cluster view): ``train`` and ``deploy`` are what ``studies.silgpo`` uses.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import torch

# CHECKPOINT_EVERY is a multiple of the batch and of the evaluations' period
from harness.rl.checkpoint import EVERY as CHECKPOINT_EVERY, plain, random_state, restore_random
from harness.families.silgpo.gat import COMPILE_HELP, check_compile, for_speed
from harness.rl.nets import masked_categorical, masked_log_softmax
from harness.rl.ppo import gae
from harness.families.silgpo.env import DeployEnv
from harness.families.silgpo.world import ServiceGraph, delay
from harness.spec.args import arg


@dataclass
class SilGpoArgs:
    episodes: int = 2000
    lr_actor: float = 5e-5
    lr_critic: float = 1e-5
    decay_episodes: int = 20_000  # the code's max_train_episodes: the learning rates reach 0 there
    gamma: float = 0.9
    gae_lambda: float = 0.95
    clip: float = 0.2
    entropy: float = 0.05
    epochs: int = 5
    batch_episodes: int = 5
    greedy_every: int = 5
    evaluate_every: int = 10
    sil: str = arg("auto", "self-imitation: auto (the code's on/off rule), on or off")
    sil_weight: float = 0.2
    sil_critic_grad: bool = arg(True, "the SIL value loss trains the critic (the paper); --no-sil-critic-grad "
                                      "detaches it (the authors' code)")
    encoder: str = arg("gat", "gat (GATv2 encoders) or mlp (each node alone: the ablation)")
    max_grad_norm: float = 0.5
    seed: int = 1
    compile: str = arg("auto", COMPILE_HELP)

    def __post_init__(self):
        check_compile(self.compile)


@plain
@dataclass
class Curve:
    """The greedy evaluations: (episode, total delay) every ``evaluate_every`` episodes; SIL-GPO's
    also say whether SIL was on and how many queues the deployment left at ρ ≥ 1 (the code's delay
    scores them a flat sojourn, so a low total may hide one)."""

    episodes: list[int] = field(default_factory=list)
    delay: list[float] = field(default_factory=list)
    sil_on: list[bool] = field(default_factory=list)
    unstable: list[int] = field(default_factory=list)  # recorded since it was added: the latest evaluations

    def rows(self) -> list[tuple]:
        """(episode, delay, sil_on, unstable queues or None where not recorded), one per evaluation."""
        return list(zip(self.episodes, self.delay, self.sil_on, self.unstable_per_evaluation()))

    def unstable_per_evaluation(self) -> list[int | None]:
        """``unstable`` aligned with ``episodes``: None for the first evaluations of a training
        resumed from a state saved before it was recorded."""
        return [None] * (len(self.episodes) - len(self.unstable)) + list(self.unstable)

    def unstable_at(self, episode: int) -> int | None:
        """The queues at ρ ≥ 1 left by the evaluation at ``episode`` (None: not recorded)."""
        i = self.episodes.index(episode) - (len(self.episodes) - len(self.unstable))  # the unrecorded come first
        return self.unstable[i] if i >= 0 else None

    @classmethod
    def read(cls, model) -> "Curve":
        """The curve ``harness train`` wrote beside ``model`` (``<name>.curve.csv``)."""
        import csv
        from pathlib import Path

        curve = cls()
        with Path(model).with_suffix(".curve.csv").open() as f:
            for row in csv.DictReader(f):
                curve.episodes.append(int(row["episode"]))
                curve.delay.append(float(row["delay"]))
                curve.sil_on.append(row.get("sil_on") == "True")
                if row.get("unstable"):  # absent from curves written before it was recorded
                    curve.unstable.append(int(row["unstable"]))
        return curve

    def final(self, last: int = 10) -> float:
        """The level the training ended at: the mean of its last ``last`` evaluations (the last
        one alone swings with the policy's last update)."""
        return float(np.mean(self.delay[-last:]))

    def to_reach(self, share: float = 0.95, last: int = 10) -> int | None:
        """The first episode whose evaluation has made ``share`` of the way from the first
        evaluation to the final level (``final(last)``): "95 % of the final reward", the reward
        being the delay saved."""
        if not self.delay:
            return None
        first = self.delay[0]
        return self.first_at(first - share * (first - self.final(last)))

    def best(self, within: int | None = None) -> float:
        """The lowest evaluation, of the first ``within`` episodes if given: what a training
        stopped there reports (the loop reads the episode count only as where to stop)."""
        return min(d for e, d in zip(self.episodes, self.delay) if within is None or e <= within)

    def best_at(self, within: int | None = None) -> int:
        """The first episode at the lowest evaluation (of the first ``within`` episodes if given)."""
        best = self.best(within)
        return next(e for e, d in zip(self.episodes, self.delay) if d == best)

    def first_at(self, target: float) -> int | None:
        """The first episode whose evaluation is at or below ``target`` (None if none is)."""
        return next((e for e, d in zip(self.episodes, self.delay) if d <= target), None)


@plain
class RewardScaling:
    """r / std of the discounted return, the std running over every step so far (Welford), as
    the code's ``Normalization.RewardScaling``."""

    def __init__(self, gamma: float):
        self.gamma, self.ret, self.n, self.mean, self.m2 = gamma, 0.0, 0, 0.0, 0.0

    def reset(self) -> None:
        self.ret = 0.0

    def __call__(self, r: float) -> float:
        self.ret = self.gamma * self.ret + r
        self.n += 1
        d = self.ret - self.mean
        self.mean += d / self.n
        self.m2 += d * (self.ret - self.mean)
        # the code's first std is the first return itself (Normalization.RunningMeanStd), so the
        # training's very first reward is scaled to about 1
        std = (self.m2 / self.n) ** 0.5 if self.n > 1 else self.ret
        return r / (std + 1e-8)


@plain
class HighReturnBuffer:
    """The code's high-return ring: admitted episodes' steps of positive discounted return."""

    def __init__(self, size: int, gamma: float):
        self.size, self.gamma, self.best, self.count = size, gamma, 0.0, 0
        self.items: list[tuple[dict, np.ndarray, int, float]] = []

    def admit(self, episodes: list[list[tuple[dict, np.ndarray, int, float]]]) -> None:
        """``episodes``: per episode, its (observation, mask, action, scaled reward) steps."""
        scored = []
        for steps in episodes:
            ret, returns = 0.0, []
            for *_, r in reversed(steps):
                ret = r + self.gamma * ret
                returns.insert(0, ret)
            scored.append((sum(returns), steps, returns))
        for total, steps, returns in sorted(scored, key=lambda s: s[0]):
            if total < 0.9 * self.best:
                continue
            self.best = max(self.best, total)
            for (obs, mask, a, _), ret in zip(steps, returns):
                if ret > 0:
                    item = (obs, mask, a, ret)
                    if len(self.items) <= self.size:
                        self.items.append(item)
                    else:
                        self.items[self.count % self.size] = item
                    self.count += 1

    def sample(self, k: int, rng: np.random.Generator):
        return [self.items[i] for i in rng.choice(len(self.items), k, replace=False)]


def _nets(g: ServiceGraph, encoder: str):
    from harness.families.silgpo.gat import SilGpoNet

    return SilGpoNet(g.N, g.S, g.N, encoder), SilGpoNet(g.N, g.S, 1, encoder)


def load_actor(path, g: ServiceGraph):
    """(the actor, its metadata) of a SIL-GPO model file (``harness train --policy sil-gpo``), for
    world ``g`` (the networks' sizes are the world's)."""
    from harness.errors import UserError
    from harness.rl.acting import load_model

    def make(meta: dict):
        if meta.get("policy") != "sil-gpo":
            raise UserError(f"a {meta.get('policy')} model, not a SIL-GPO one", source=str(path))
        return _nets(g, meta["args"]["encoder"])[0]
    return load_model(path, make)


def _logits(actor, observations: list[dict]) -> torch.Tensor:
    from harness.families.silgpo.gat import collate

    return actor(collate(observations))


def act(actor, env: DeployEnv, greedy: bool = True, obs: dict | None = None) -> tuple[int, float]:
    """(server, log-probability): the argmax, or a sample, under the mask; ``obs``: the
    environment's observation, when the caller holds it already."""
    mask = torch.as_tensor(env.action_masks())[None]
    with torch.no_grad():
        dist = masked_categorical(_logits(actor, [env.observation() if obs is None else obs]), mask)
        a = dist.probs.argmax(dim=1) if greedy else dist.sample()
        return int(a), float(dist.log_prob(a))


def deploy(g: ServiceGraph, actor) -> np.ndarray:
    """The deployment the actor builds greedily."""
    return rollout(DeployEnv(g), actor).X


def rollout(env: DeployEnv, actor) -> DeployEnv:
    """``env`` after a greedy episode of the actor."""
    obs = env.reset()
    while not env.done:
        obs = env.step(act(actor, env, obs=obs)[0])[0]
    return env


def train(g: ServiceGraph, args: SilGpoArgs, on_progress: Callable[[int, float, bool], None] | None = None,
          checkpoint: Callable[[dict], None] | None = None, start: dict | None = None):
    """(actor, critic, Curve, seconds) after ``args.episodes`` episodes on world ``g``.
    ``checkpoint(state)`` is handed the whole training state every ``CHECKPOINT_EVERY`` episodes
    (where no batch is half-collected); ``start``, such a state, goes on from it: the same nets,
    optimisers, random streams, reward scaling and SIL buffer, so a training stopped and resumed
    ends bit for bit where one run would (tested). ``seconds`` counts every part."""
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    actor, critic = _nets(g, args.encoder)
    opt_a = torch.optim.Adam(actor.parameters(), lr=args.lr_actor, eps=1e-5)
    opt_c = torch.optim.Adam(critic.parameters(), lr=args.lr_critic, eps=1e-5)
    env, scaling = DeployEnv(g), RewardScaling(args.gamma)
    steps_per_episode = env.steps
    sil = HighReturnBuffer(5 * steps_per_episode, args.gamma)
    sil_on = args.sil == "on"
    batch: list[list] = []
    curve, best_eval, t0, total_steps, first, spent = Curve(), np.inf, time.monotonic(), 0, 1, 0.0
    if start is not None:
        for net, opt, key in ((actor, opt_a, "actor"), (critic, opt_c, "critic")):
            net.load_state_dict(start[key])
            opt.load_state_dict(start[f"{key}_opt"])
        restore_random(rng, start)
        scaling, sil, sil_on, curve = start["scaling"], start["sil"], start["sil_on"], start["curve"]
        env.carry(start["env"])
        best_eval, total_steps, first, spent = start["best_eval"], start["total_steps"], start["episode"] + 1, start["seconds"]
    fast_actor, fast_critic = for_speed((actor, critic), args.compile, args.encoder)
    for episode in range(first, args.episodes + 1):
        obs, steps = env.reset(), []
        scaling.reset()
        greedy = episode % args.greedy_every == 0
        while not env.done:
            mask = env.action_masks()
            a, logp = act(fast_actor, env, greedy, obs)
            nxt, r, done, _ = env.step(a)
            steps.append((obs, mask, a, logp, scaling(r), done))
            obs = nxt
            total_steps += 1
        batch.append(steps)
        if len(batch) == args.batch_episodes:
            sil.admit([[(o, m, a, r) for o, m, a, _, r, _ in ep] for ep in batch])
            lr_scale = max(0.0, 1 - total_steps / (args.decay_episodes * steps_per_episode))
            for opt, lr in ((opt_a, args.lr_actor), (opt_c, args.lr_critic)):
                for group in opt.param_groups:
                    group["lr"] = lr * lr_scale
            _update(fast_actor, fast_critic, opt_a, opt_c, [s for ep in batch for s in ep], steps_per_episode,
                    sil if sil_on else None, args, rng)
            batch = []
        if episode % args.evaluate_every == 0:
            evaluated = rollout(env, fast_actor)
            delay_now = evaluated.current
            if args.sil == "auto":  # the code's rule, best updated first
                was_on, best_eval = sil_on, min(best_eval, delay_now)
                sil_on = (delay_now > best_eval) if was_on else (delay_now >= best_eval + 5)
            best_eval = min(best_eval, delay_now)
            curve.episodes.append(episode)
            curve.delay.append(delay_now)
            curve.sil_on.append(sil_on)
            curve.unstable.append(delay(evaluated.g, evaluated.X).unstable)
            if on_progress:
                on_progress(episode, delay_now, sil_on)
        if checkpoint is not None and not batch and episode % CHECKPOINT_EVERY == 0:
            checkpoint({"episode": episode, "actor": actor.state_dict(), "critic": critic.state_dict(),
                        "actor_opt": opt_a.state_dict(), "critic_opt": opt_c.state_dict(),
                        **random_state(rng), "scaling": scaling,
                        "sil": sil, "sil_on": sil_on, "curve": curve, "best_eval": best_eval,
                        "total_steps": total_steps, "env": env.carried(), "seconds": spent + time.monotonic() - t0})
    return actor, critic, curve, spent + time.monotonic() - t0


def _update(actor, critic, opt_a, opt_c, steps: list, minibatch: int, sil: HighReturnBuffer | None,
            args: SilGpoArgs, rng: np.random.Generator) -> None:
    from harness.families.silgpo.gat import collate

    obs = [s[0] for s in steps]
    masks = torch.as_tensor(np.stack([s[1] for s in steps]))
    actions = torch.as_tensor([s[2] for s in steps])
    old_logp = torch.as_tensor([s[3] for s in steps], dtype=torch.float32)
    rewards = torch.as_tensor([s[4] for s in steps], dtype=torch.float32)
    dones = torch.as_tensor([float(s[5]) for s in steps])
    with torch.no_grad():
        values = critic(collate(obs)).squeeze(1)
        next_values = torch.cat([values[1:], torch.zeros(1)])
        adv, _ = gae(rewards[:, None], values[:, None], dones[:, None], torch.zeros(1), args.gamma, args.gae_lambda)
        adv = adv.squeeze(1)
        target = rewards + args.gamma * next_values * (1 - dones)  # the code's one-step critic target
    sil_k = minibatch // 2
    for _ in range(args.epochs):
        for idx in np.array_split(rng.permutation(len(steps)), max(1, len(steps) // minibatch)):
            b = collate([obs[i] for i in idx])
            logp_all = masked_log_softmax(actor(b), masks[idx])
            logp = logp_all.gather(1, actions[idx][:, None]).squeeze(1)
            entropy = -(logp_all.exp() * logp_all.masked_fill(~masks[idx], 0.0)).sum(dim=1)
            ratio = torch.exp(logp - old_logp[idx])
            surrogate = torch.min(ratio * adv[idx], ratio.clamp(1 - args.clip, 1 + args.clip) * adv[idx])
            loss_a = (-surrogate - args.entropy * entropy).mean()
            loss_c = ((critic(b).squeeze(1) - target[idx]) ** 2).mean()
            if sil is not None and len(sil.items) >= sil_k > 0:
                items = sil.sample(sil_k, rng)
                sb = collate([it[0] for it in items])
                s_mask = torch.as_tensor(np.stack([it[1] for it in items]))
                s_act = torch.as_tensor([it[2] for it in items])
                s_ret = torch.as_tensor([it[3] for it in items], dtype=torch.float32)
                s_logp = masked_log_softmax(actor(sb), s_mask).gather(1, s_act[:, None]).squeeze(1)
                v = critic(sb).squeeze(1)
                gap = (s_ret - v).clamp(min=0)
                loss_a = loss_a + args.sil_weight * (-s_logp * gap.detach()).mean()
                value_gap = gap if args.sil_critic_grad else gap.detach()  # the code detaches it: no gradient
                loss_c = loss_c + args.sil_weight * (0.5 * value_gap ** 2).mean()
            for opt, loss, net in ((opt_a, loss_a, actor), (opt_c, loss_c, critic)):
                opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
                opt.step()
