"""Reschedulers learned in CEEnv: what REACH, RSDQL and any new CEEnv agent share.

A learned policy is one class (see ``reach.py``): its ``Args`` (the model to act with and the
training hyperparameters, CleanRL's one dataclass per entry point), ``train`` (the algorithm, top
to bottom), ``make_net`` (the empty network for a model's metadata) and ``score`` (logits or
Q-values of the valid actions). Everything else — acting on a ClusterView, saving and loading the
model with its metadata, checking that a model fits the cluster, ``harness train``'s flags — is
here and in ``harness.rl``, for every learned policy alike.
"""

from __future__ import annotations

import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable, ClassVar

import numpy as np

from harness.errors import UserError
from harness.policies.ceenv_state import to_ceenv
from harness.policies.contract import Ability, ClusterView, Move, Policy
from harness.sim.ceenv import ENV_ID, Dynamics

ENV_VERSION = ENV_ID.split("/")[1]


class CEEnvPolicy(Policy):
    """Acts with a trained network: the valid action with the highest score; Idle -> no move."""

    abilities = frozenset({Ability.PLAN, Ability.TRAIN})
    placed_by = "default"
    env_version: ClassVar[str] = ENV_VERSION
    # named sets of `harness train` flags (its Args' and EnvConfig's) that `--recipe NAME` puts
    # before the user's own flags: how a committed model was made, in one place
    recipes: ClassVar[dict[str, list[str]]] = {}

    def __init__(self, args):
        super().__init__(args)
        if args.model is None:
            raise UserError(f"the {self.name} policy needs a trained model (model=...); make one with "
                            f"'harness train --policy {self.name}'")
        from harness.rl.acting import load_model

        self.net, self.meta = load_model(args.model, self.make_net)
        if self.meta.get("policy") not in (None, self.name):
            raise UserError(f"the model was trained for policy {self.meta['policy']!r}, not {self.name!r}",
                            source=str(args.model))
        if self.meta.get("env_version") != self.env_version:
            raise UserError(f"the model was trained in {self.meta.get('env_version')}, this harness has "
                            f"{self.env_version}; train it again", source=str(args.model))

    # ------------------------------------------------------------ what a subclass gives
    @classmethod
    def make_net(cls, meta: dict):
        """The empty network for a model's metadata (obs_dim, n_actions, args)."""
        raise NotImplementedError

    @staticmethod
    def score(net, obs):
        """(B, n_actions) scores of every action; the highest valid one is taken."""
        raise NotImplementedError

    @classmethod
    def train(cls, dyn: Dynamics, args, on_progress: Callable[[int, float], None] | None = None) -> tuple[Any, list]:
        """(network, learning curve rows (env steps, mean return, seconds))."""
        raise NotImplementedError

    # ------------------------------------------------------------ shared
    @property
    def max_replicas(self) -> int:
        return int(self.meta["max_replicas"])

    def state(self, view: ClusterView):
        """(Dynamics, Batch, slot -> pod name) as the model was trained to see them: its slots, and
        under load (``harness train --load``) the view's rate or users."""
        env = self.meta.get("env_config") or {}
        # the load fields it was trained with (EnvConfig's defaults for any it lacks; older models: none)
        load = {k: tuple(v) if k == "load" else v for k, v in env.items() if k.startswith("load")}
        return to_ceenv(view, self.max_replicas, load or None)

    def check(self, view: ClusterView) -> None:
        """A model sees a fixed number of nodes and slots: refuse one trained for another cluster."""
        dyn, _, _ = self.state(view)
        want = (self.meta.get("obs_dim"), self.meta.get("n_actions"))
        have = (dyn.obs_dim, dyn.n_actions)
        if want != have:
            raise UserError(f"the {self.name} model was trained for {want[1] - 1} pod-node moves, this testbed and "
                            f"app have {have[1] - 1}; train it on this testbed's profile", field="--policy")

    def plan(self, view: ClusterView) -> list[Move]:
        dyn, st, names = self.state(view)
        mask = dyn.masks(st)
        if not self.meta.get("args", {}).get("unmasked"):
            return decode(dyn, view, names, self.act(dyn.observe(st), mask))
        a = self.act(dyn.observe(st), np.ones_like(mask))  # trained without a mask: it acts without one
        return decode(dyn, view, names, a) if mask.reshape(-1)[a] else []  # an invalid choice is no move (CEEnv ends there)

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """The action (CEEnv's layout) for one observation and its mask: the valid one scored highest."""
        import torch

        from harness.rl.nets import MASKED

        obs, mask = torch.as_tensor(obs), torch.as_tensor(mask)
        with torch.no_grad():
            s = torch.where(mask, self.score(self.net, obs), torch.full(mask.shape, MASKED))
        return int(s.argmax())

    @classmethod
    def metadata(cls, dyn: Dynamics, args, app: str, profile: str, testbed: str, curve: list) -> dict:
        from harness.rl.acting import metadata

        return metadata(cls.name, cls.env_version, dyn, asdict(args), app, profile, testbed, curve)

    @classmethod
    def load(cls, path: str | Path) -> "CEEnvPolicy":
        return cls(cls.Args(model=str(path)))


def decode(dyn: Dynamics, view: ClusterView, names: dict[int, str], a: int) -> list[Move]:
    """CEEnv's action ``a`` as moves: ``slot * N + node`` moves the pod in that slot to that node;
    the last action (``n_actions - 1``) is Idle, no move."""
    if a == dyn.n_actions - 1:
        return []
    slot, node = divmod(a, dyn.N)
    if slot not in names:  # an empty slot: nothing to move (an agent without masks may pick one)
        return []
    return [Move(names[slot], view.nodes[node].name)]


def recipe_flags(cls: type[CEEnvPolicy], recipe: str, field: str = "--recipe") -> list[str]:
    """A recipe's flags; an unknown recipe is a UserError naming the policy's recipes."""
    recipes = getattr(cls, "recipes", {})
    if recipe not in recipes:
        raise UserError(f"{cls.name} has no recipe {recipe!r}; it has: {', '.join(recipes) or 'none'}", field=field)
    return list(recipes[recipe])


def training_config(cls: type[CEEnvPolicy], argv: list[str], recipe: str | None = None):
    """(Args, EnvConfig) from ``harness train``'s flags; a recipe's flags come first, so the
    user's own override them. A bad flag or value, or an unknown recipe, is a UserError."""
    from harness.policies.contract import validate_args
    from harness.sim.ceenv import EnvConfig
    from harness.spec.args import parse_flags

    if recipe is not None:
        argv = recipe_flags(cls, recipe) + list(argv)
    parsed = parse_flags(list(argv), training_groups(cls), TRAIN_ALIASES, skip=("model",))
    args, env = parsed[f"{cls.name} (its Args)"], parsed["environment (CEEnv's EnvConfig)"]
    validate_args(cls.name, args)
    validate_args("environment", env)
    return args, env


TRAIN_ALIASES = {"steps": "total_steps"}  # the flag older scripts and models use


def training_groups(cls: type[CEEnvPolicy]) -> dict[str, type]:
    """``harness train``'s flag groups: the policy's Args and CEEnv's EnvConfig."""
    from harness.sim.ceenv import EnvConfig

    return {f"{cls.name} (its Args)": cls.Args, "environment (CEEnv's EnvConfig)": EnvConfig}


def model_name(policy: str, app: str, seed: int, when: float) -> str:
    """Every trained model names itself: policy, app, seed and UTC time (never another's name)."""
    return f"{policy}-{app}-seed{seed}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime(when))}"


def train_and_save(cls: type[CEEnvPolicy], dyn: Dynamics, args, app: str, profile: str, testbed: str, out_dir: Path,
                   name: str | None = None, force: bool = False,
                   on_progress: Callable[[int, float], None] | None = None, recipe: str | None = None,
                   profile_content=None) -> tuple[Path, list]:
    """Train ``cls`` in ``dyn``, save the model with its metadata (its provenance included:
    ``harness.policies.provenance``) and learning curve (CSV, PNG) as ``out_dir/<name>.pt``;
    refuses to replace an existing model unless ``force``."""
    from harness.policies import provenance
    from harness.spec.profile import load_profile

    from harness.rl.acting import save_model
    from harness.rl.curves import write_curve

    started = time.time()
    path = out_dir / f"{name or model_name(cls.name, app, args.seed, started)}.pt"
    if path.exists() and not force:
        raise UserError("a model of that name exists; choose another --name, or --force to replace it",
                        source=str(path))
    net, curve = cls.train(dyn, args, on_progress)
    meta = cls.metadata(dyn, args, app, profile, testbed, curve)
    meta.update(name=path.stem, trained_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
                provenance=provenance.record(app, profile, profile_content or load_profile(profile), testbed, recipe,
                                             getattr(args, "seed", None)))
    save_model(net, meta, path)
    write_curve(curve, path.with_suffix(".curve.csv"), path.with_suffix(".curve.png"), f"{cls.name} on {app}")
    return path, curve
