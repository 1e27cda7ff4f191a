"""A plain torch module trained on ``harness/CEEnv-v0`` as a policy, CleanRL's way:
``--policy torch[model=agent.pt]``.

CleanRL's agents are plain ``nn.Module``s (PPO's ``actor``, DQN's ``QNetwork``) with no file
format of their own; harness takes the module saved without its Python class, as TorchScript
(``torch.jit.save(torch.jit.script(agent.actor), "agent.pt")``, deprecated in torch 2.x but what
older CleanRL scripts do) or as an exported program (``torch.export.save(torch.export.export(
agent.actor, (obs,)), "agent.pt2")``), never a pickle.
Its ``forward`` maps observations (B, obs_dim) float32 to one score per action (B, n_actions):
logits or Q-values; the agent acts by the best valid one (CEEnv's mask applied). Spaces are
checked and actions decoded as every outside agent's (``outside_agents``)."""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.errors import UserError
from harness.policies import register
from harness.policies.outside_agents import CEEnvAgent
from harness.spec.args import arg


@dataclass
class TorchModuleArgs:
    model: str = arg("", "the module's file: torch.jit.save of a scripted module, or torch.export.save (.pt2)")
    max_replicas: int = arg(5, "the pod slots per service of the CEEnv it was trained in (EnvConfig.max_replicas)")


def load_module(path: Path):
    """The module in ``path``, TorchScript or an exported program; a pickled module is refused."""
    import torch

    try:
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
    except zipfile.BadZipFile:
        raise UserError(f"torch: {path} is not a saved torch module (torch.jit.save or torch.export.save)",
                        field="--policy") from None
    exported = any("/models/" in n for n in names)
    if not exported and not any("/code/" in n for n in names):  # torch.save's archive: a pickle, never loaded
        raise UserError(f"torch: {path} was saved with torch.save (a pickle, which harness does not load): save "
                        f"the module with torch.jit.save(torch.jit.script(module), ...) or torch.export.save",
                        field="--policy")
    try:
        if exported:
            return torch.export.load(str(path)).module()
        return torch.jit.load(str(path), map_location="cpu").eval()
    except Exception as exc:  # noqa: BLE001 — a file torch cannot read as either: one line
        what = "an exported program" if exported else "TorchScript"
        raise UserError(f"torch: {path} is not {what} torch can load ({type(exc).__name__}: {exc})".splitlines()[0],
                        field="--policy") from None


def last_line(text: str) -> str:
    """The last non-empty line of an error's text: TorchScript's says where first and what last."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else ""


@register
class TorchModulePolicy(CEEnvAgent):
    """A torch module (CleanRL's actor or Q-network) trained on harness/CEEnv-v0, rescheduling as REACH does."""

    name = "torch"
    description = ("a plain torch module trained on harness/CEEnv-v0, CleanRL's way (TorchScript or torch.export): "
                   "torch[model=agent.pt]")
    Args = TorchModuleArgs

    def __init__(self, args: TorchModuleArgs):
        super().__init__(args)
        self.module = load_module(self.agent_file("a module's file", "agent.pt"))

    def scores(self, obs: np.ndarray) -> np.ndarray:
        import torch

        with torch.no_grad():
            out = self.module(torch.as_tensor(np.asarray(obs, np.float32)[None]))
        return np.asarray(out[0] if isinstance(out, (tuple, list)) else out, dtype=np.float64)

    def spaces(self, obs_dim: int):
        try:
            out = self.scores(np.zeros(obs_dim, np.float32))
        except Exception as exc:  # noqa: BLE001 — a module of another input: the check's one line
            raise UserError(f"torch: the module in {self.model_file} does not take CEEnv's observation of {obs_dim} "
                            f"numbers for this app and testbed (max_replicas {self.args.max_replicas}): "
                            f"{type(exc).__name__}: {last_line(str(exc))}",
                            field="--policy") from None
        return (obs_dim,), (out.shape[-1] if out.ndim == 2 and out.shape[0] == 1 else None)

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        s = self.scores(obs)[0]
        return int(np.argmax(np.where(mask, s, -np.inf)))
