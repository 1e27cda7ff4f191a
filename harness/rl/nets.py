"""Small networks and the masked categorical distribution (Huang & Ontañón's invalid-action masking:
invalid logits are set to a large negative number before the softmax)."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical

MASKED = -1e8


def layer(i: int, o: int, std: float = np.sqrt(2)) -> nn.Linear:
    lin = nn.Linear(i, o)
    nn.init.orthogonal_(lin.weight, std)
    nn.init.constant_(lin.bias, 0.0)
    return lin


def mlp(inp: int, out: int, hidden: int, layers: int, out_std: float = 1.0) -> nn.Sequential:
    """``layers`` hidden layers of ``hidden`` units with tanh, then a linear head."""
    mods: list[nn.Module] = []
    d = inp
    for _ in range(layers):
        mods += [layer(d, hidden), nn.Tanh()]
        d = hidden
    mods.append(layer(d, out, out_std))
    return nn.Sequential(*mods)


def masked_categorical(logits: torch.Tensor, mask: torch.Tensor) -> Categorical:
    # no argument validation: it checks every probability on every call, a fifth of an update's time
    return Categorical(logits=torch.where(mask, logits, torch.full_like(logits, MASKED)), validate_args=False)


def masked_log_softmax(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """log-probabilities of ``masked_categorical`` (B, A), without building a distribution: what a
    PPO update needs for the taken actions' log-probabilities and the entropy, in fewer operations."""
    return torch.log_softmax(logits.masked_fill(~mask, MASKED), dim=1)
