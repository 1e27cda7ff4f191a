"""Agents trained outside harness on ``harness/CEEnv-v0``, as policies: what the Stable-Baselines3
adapter (``sb3``) and the plain torch module's (``torch``, CleanRL's way) share.

Each round the cluster view becomes CEEnv's observation and mask (``harness.policies.ceenv_state``),
the agent picks an action, and the action is decoded as CEEnv's layout (``docs/policies.md``, "The
CEEnv action layout": ``slot * N + node`` moves the pod in that slot to that node, the last action
is Idle). Before any run (``check``) the agent's observation length and number of actions are
held against CEEnv's for this app and testbed, so an agent trained for another app or cluster is
refused in one line. The default scheduler places new pods."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from harness.errors import UserError
from harness.policies.ceenv_state import to_ceenv
from harness.policies.contract import Ability, ClusterView, Move, Policy
from harness.policies.learned import decode


class CEEnvAgent(Policy):
    """A policy acting by an agent's choice over CEEnv's actions. A subclass loads the agent,
    says its spaces (``spaces``) and chooses (``act``); ``Args`` has ``model`` and ``max_replicas``."""

    abilities = frozenset({Ability.PLAN})
    placed_by = "default"
    acts_with_a_users_file = True  # nothing to act with until a user gives an agent's file

    def agent_file(self, what: str, example: str) -> Path:
        """The user's file ``args.model``; one line naming what is needed when it is not there."""
        path = Path(self.args.model)
        if not self.args.model or not path.is_file():
            raise UserError(f"{self.name} needs {what}: {self.name}[model={example}] ({self.args.model or 'none given'})",
                            field="--policy")
        return path

    def spaces(self, obs_dim: int) -> tuple[tuple[int, ...], int | None]:
        """(observation shape, number of actions) the agent was made for."""
        raise NotImplementedError

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """The agent's action for one observation; ``mask`` says which actions are valid."""
        raise NotImplementedError

    def state(self, view: ClusterView):
        return to_ceenv(view, self.args.max_replicas)

    def check(self, view: ClusterView) -> None:
        dyn, _, _ = self.state(view)
        have, want = self.spaces(dyn.obs_dim), ((dyn.obs_dim,), dyn.n_actions)
        if have != want:
            raise UserError(f"{self.name}: the agent in {self.model_file} observes {have[0]} and has {have[1]} "
                            f"actions; CEEnv for this app and testbed (max_replicas {self.args.max_replicas}) "
                            f"observes {want[0]} with {want[1]} actions: train it on harness/CEEnv-v0 with this "
                            f"app and profile", field="--policy")

    def plan(self, view: ClusterView) -> list[Move]:
        dyn, st, names = self.state(view)
        obs, mask = dyn.observe(st)[0], dyn.masks(st)[0]
        a = self.act(obs, mask)
        if not 0 <= a < len(mask) or not mask[a]:  # an agent without masks may choose an invalid move: none is made
            return []
        return decode(dyn, view, names, a)
