"""Stable-Baselines3 agents as policies: an agent trained on ``harness/CEEnv-v0`` (MaskablePPO from
sb3-contrib, PPO, DQN, A2C, or any SB3 algorithm whose ``predict`` takes an observation) plans
moves in every world of the one ground, as REACH does: ``--policy sb3[model=agent.zip]``. Its
spaces are checked and its actions decoded as every outside agent's (``outside_agents``); a
MaskablePPO agent is given the mask."""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.errors import UserError
from harness.policies import register
from harness.policies.outside_agents import CEEnvAgent
from harness.spec.args import arg

ALGORITHMS = {"MaskablePPO": "sb3_contrib", "PPO": "stable_baselines3", "DQN": "stable_baselines3",
              "A2C": "stable_baselines3", "QRDQN": "sb3_contrib", "TRPO": "sb3_contrib"}


@dataclass
class Sb3Args:
    model: str = arg("", "the agent's .zip (model.save(...) of Stable-Baselines3)")
    algo: str = arg("auto", "its algorithm: auto (read from the file), MaskablePPO, PPO, DQN, A2C, QRDQN, TRPO")
    max_replicas: int = arg(5, "the pod slots per service of the CEEnv it was trained in (EnvConfig.max_replicas)")
    deterministic: bool = arg(True, "act by the agent's best action (false: sample)")


BY_POLICY_MODULE = {"sb3_contrib.common.maskable.policies": "MaskablePPO", "stable_baselines3.dqn.policies": "DQN",
                    "sb3_contrib.qrdqn.policies": "QRDQN"}


def algorithm_of(path: Path) -> str:
    """The SB3 algorithm that saved ``path``, by its policy class's module (the file's ``data``
    entry); an actor-critic policy reads as PPO (give algo=A2C or TRPO for those)."""
    import json

    try:
        with zipfile.ZipFile(path) as z:
            module = json.loads(z.read("data")).get("policy_class", {}).get("__module__", "")
    except (zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise UserError(f"sb3: {path} is not a Stable-Baselines3 agent's .zip ({exc})", field="--policy") from None
    return BY_POLICY_MODULE.get(module, "PPO")


@register
class Sb3Policy(CEEnvAgent):
    """A Stable-Baselines3 agent trained on harness/CEEnv-v0, rescheduling as REACH does."""

    name = "sb3"
    description = "a Stable-Baselines3 agent trained on harness/CEEnv-v0 (MaskablePPO, PPO, DQN, ...): sb3[model=agent.zip]"
    Args = Sb3Args

    def __init__(self, args: Sb3Args):
        super().__init__(args)
        path = self.agent_file("an agent's file", "agent.zip")
        algo = algorithm_of(path) if args.algo == "auto" else args.algo
        if algo not in ALGORITHMS:
            raise UserError(f"sb3: algo {algo!r} is not one of {', '.join(ALGORITHMS)}", field="--policy")
        import importlib

        try:
            cls = getattr(importlib.import_module(ALGORITHMS[algo]), algo)
        except ImportError:
            raise UserError("sb3 needs Stable-Baselines3: pip install 'harness-bench[sb3]'", field="--policy") from None
        try:
            self.agent = cls.load(str(path), device="cpu")
        except Exception as exc:  # noqa: BLE001 — a file SB3 cannot read: one line
            raise UserError(f"sb3: {path} is not a {algo} agent SB3 can load ({type(exc).__name__}: {exc})".splitlines()[0],
                            field="--policy") from None
        self.algo, self.masked = algo, algo == "MaskablePPO"

    def spaces(self, obs_dim: int):
        obs, act = self.agent.observation_space, self.agent.action_space
        return tuple(getattr(obs, "shape", ()) or ()), getattr(act, "n", None)

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        kwargs = {"action_masks": mask} if self.masked else {}
        action, _ = self.agent.predict(obs, deterministic=self.args.deterministic, **kwargs)
        return int(np.asarray(action).reshape(-1)[0])
