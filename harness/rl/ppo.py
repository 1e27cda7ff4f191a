"""What the PPO learners share (REACH's on CEEnv, DS-PPO on the multi-cluster world)."""

from __future__ import annotations

import torch


def gae(rewards: torch.Tensor, values: torch.Tensor, dones: torch.Tensor, next_value: torch.Tensor, gamma: float,
        lam: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Generalised advantage estimation over a (T, B) rollout: (advantages, returns). ``dones[t]``
    ends the episode after step t; ``next_value`` is the critic's value after the last step."""
    adv = torch.zeros_like(rewards)
    last = torch.zeros(rewards.shape[1])
    for t in reversed(range(rewards.shape[0])):
        nv = next_value if t == rewards.shape[0] - 1 else values[t + 1]
        nonterminal = 1.0 - dones[t]
        delta = rewards[t] + gamma * nv * nonterminal - values[t]
        last = delta + gamma * lam * nonterminal * last
        adv[t] = last
    return adv, adv + values
