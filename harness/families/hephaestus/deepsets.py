"""Permutation-equivariant networks over a set of rows (HephaestusForge, paper 001, §4.5): one
logit per row whatever the number of rows, so a model trained on 4 clusters acts on 8, 16, 32.

An equivariant layer maps each row x_i to x_i Λ − (max_j x_j) Γ (Zaheer et al.'s DeepSets with
max pooling); the actor stacks them to one logit per row, the critic pools the last layer's rows
by their mean into one value.
"""

from __future__ import annotations

import torch
from torch import nn


class Equivariant(nn.Module):
    def __init__(self, inp: int, out: int):
        super().__init__()
        self.lam = nn.Linear(inp, out)
        self.gam = nn.Linear(inp, out, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, N, inp) -> (B, N, out)
        return self.lam(x) - self.gam(x.max(dim=1, keepdim=True).values)


class DeepSetActor(nn.Module):
    """Rows in, one logit per row out (the code's sizes: 64, ReLU then ELU)."""

    def __init__(self, features: int, hidden: int = 64):
        super().__init__()
        self.net = nn.Sequential(Equivariant(features, hidden), nn.ReLU(), Equivariant(hidden, hidden), nn.ELU(),
                                 Equivariant(hidden, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x).squeeze(-1)


class DeepSetCritic(nn.Module):
    """Rows in, one value out: three equivariant layers, mean pooling, a small MLP."""

    def __init__(self, features: int, hidden: int = 64):
        super().__init__()
        self.rows = nn.Sequential(Equivariant(features, hidden), nn.ELU(), Equivariant(hidden, hidden), nn.ELU(),
                                  Equivariant(hidden, hidden), nn.ELU())
        self.head = nn.Sequential(nn.Linear(hidden, hidden), nn.ELU(), nn.Linear(hidden, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.rows(x).mean(dim=1)).squeeze(-1)
