"""A plain torch module (CleanRL's way) trained on harness/CEEnv-v0 is a policy with no glue:
``--policy torch[model=agent.pt]``, saved as TorchScript or an exported program; a pickle is never
loaded, a module of another input is refused before a run, and the best *valid* action is taken."""

import json
import subprocess
import sys

import numpy as np
import pytest
import torch

from harness.policies import build
from harness.sim.ceenv import Dynamics, EnvConfig, default_model

APP, PROFILE = "workloads/chain.json", "profiles/chain.reach-local.json"


def _dims():
    dyn = Dynamics(default_model(APP, PROFILE), EnvConfig())
    return dyn.obs_dim, dyn.n_actions


def _actor(obs_dim, n_actions):
    torch.manual_seed(1)  # an untrained CleanRL actor: the adapter's contract, not a model's quality
    return torch.nn.Sequential(torch.nn.Linear(obs_dim, 64), torch.nn.Tanh(), torch.nn.Linear(64, n_actions))


def _evaluate(tmp_path, policy):
    return subprocess.run([sys.executable, "-m", "harness", "evaluate", "node-failure", "--policy", policy, "--seeds",
                           "1", "--out", str(tmp_path / "out"), "--json"], capture_output=True, text=True)


@pytest.mark.parametrize("form", ["torchscript", "export"])
def test_a_saved_module_is_ranked_by_evaluate(tmp_path, form):
    obs_dim, n_actions = _dims()
    actor = _actor(obs_dim, n_actions)
    path = tmp_path / "agent.pt"
    if form == "torchscript":
        torch.jit.save(torch.jit.script(actor), path)
    else:
        torch.export.save(torch.export.export(actor, (torch.zeros(1, obs_dim),)), path)
    r = _evaluate(tmp_path, f"torch[model={path}],default")
    assert r.returncode == 0, r.stderr
    rows = {s["policy"]: s for s in json.loads(r.stdout)}
    assert set(rows) == {f"torch[model={path}]", "default"} and rows[f"torch[model={path}]"]["requests"] > 0


def test_a_pickle_and_a_module_of_other_input_are_refused_in_one_line(tmp_path):
    obs_dim, n_actions = _dims()
    pickled = tmp_path / "pickled.pt"
    torch.save(_actor(obs_dim, n_actions), pickled)
    r = _evaluate(tmp_path, f"torch[model={pickled}]")
    assert r.returncode == 2 and "torch.save" in r.stderr.strip().splitlines()[-1]  # after the banner, one line
    other = tmp_path / "other.pt"
    torch.jit.save(torch.jit.script(_actor(obs_dim + 3, n_actions)), other)
    r = _evaluate(tmp_path, f"torch[model={other}]")
    err = r.stderr.strip().splitlines()[-1]
    assert r.returncode == 2 and f"observation of {obs_dim} numbers" in err and "shapes cannot be multiplied" in err
    fewer = tmp_path / "fewer.pt"
    torch.jit.save(torch.jit.script(_actor(obs_dim, n_actions - 1)), fewer)
    r = _evaluate(tmp_path, f"torch[model={fewer}]")
    assert r.returncode == 2 and f"{n_actions - 1} actions" in r.stderr and f"{n_actions} actions" in r.stderr


def test_the_best_valid_action_is_taken(tmp_path):
    """A module whose best score is always an invalid action (a pod slot that is empty) still moves
    by the best valid one."""
    from harness.rescheduler.evaluate import SimWorld, scenario, slots_for

    dyn = Dynamics(default_model(APP, PROFILE), EnvConfig())
    world = SimWorld(dyn, scenario(dyn, 4, 0))
    world.place(build("default"), slots_for(dyn, 4))
    view = world.view()
    from harness.policies.ceenv_state import to_ceenv

    d, st, _ = to_ceenv(view, 5)
    mask = d.masks(st)[0]
    invalid, valid = int(np.flatnonzero(~mask)[0]), int(np.flatnonzero(mask[:-1])[-1])
    scores = torch.zeros(dyn.n_actions)
    scores[invalid], scores[valid] = 10.0, 5.0

    class Fixed(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("s", scores)

        def forward(self, x):
            return self.s.expand(x.shape[0], -1) + 0 * x.sum(1, keepdim=True)

    path = tmp_path / "fixed.pt"
    torch.jit.save(torch.jit.script(Fixed()), path)
    policy = build("torch", model=str(path))
    policy.check(view)
    moves = policy.plan(view)
    node = valid % d.N
    assert len(moves) == 1 and moves[0].node == view.nodes[node].name
