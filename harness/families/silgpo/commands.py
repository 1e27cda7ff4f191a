"""SIL-GPO's world as harness's commands see it (``world: servicegraph``, registered in
``harness.scenarios.worlds``): a scenario file's live runs (``harness run``: ``ScenarioModel`` and
``plays``, from ``harness.families.silgpo.live``) and a leaderboard's tracks, each cell one instance,
one setting and one seed; each policy builds its deployment of the instance's instances
(``harness.families.silgpo.baselines``'s baselines, or a learner's model) and is scored by the model's
total delay — the authors' code's form (``total_delay``, what the paper's figures plot), the
paper's in seconds (``total_delay_s``) — the unstable queues left, and a request's mean latency
in the paper's form (``mean_ms``, weighted by the requests' rates). Live (on the ``silgpo-local``
testbed), the cell's deployments are played through the common run as a scenario of this world
at light load (the rates scaled so that the busiest queue runs at ρ 0.5) and each ``mean_ms`` is
the users' measured mean: a track ranked by ``mean_ms`` has both worlds, at their two loads.

A run directory per (policy, seed) holds its ``summary.json``, with the deployment itself.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from harness.scenarios.worlds import register

LEARNERS = ("sil-gpo", "rsdql-deploy")
INVENTORY = "inventories/silgpo-local.yaml"  # the ten servers a track's live cells play on
NOT_HERE = "ability does not fit: places pods on a cluster's nodes, not instances on SIL-GPO's servers"


def policy_names() -> list[str]:
    from harness.families.silgpo.baselines import DEPLOYERS

    return list(DEPLOYERS) + list(LEARNERS)


def world(app: str, setting: str):
    """The ServiceGraphWorld of an app name (``authors`` or ``seed-N``) and a setting."""
    from harness.families.silgpo.learners import ServiceGraphWorld

    return ServiceGraphWorld(instance=-1 if app == "authors" else int(app.removeprefix("seed-")),
                             sweep=None if setting == "default" else setting)


def model_file(policy: str, app: str, setting: str, model_dir: Path) -> Path:
    """Where a learner's model for an instance and setting is: ``<policy>-<app>[-<setting>].pt``."""
    tail = "" if setting == "default" else "-" + setting.replace("=", "").replace(",", "-")
    return model_dir / f"{policy}-{app}{tail}.pt"


def missing(policy: str, app: str, setting: str, model_dir: Path) -> str | None:
    """Why ``policy`` cannot join (app, setting), or None."""
    if policy in policy_names():
        if policy in LEARNERS and not model_file(policy, app, setting, model_dir).exists():
            return f"no model for {app} {setting} (harness train {' '.join(train_argv(policy, app, setting, model_dir))})"
        return None
    return NOT_HERE


def train_argv(policy: str, app: str, setting: str, model_dir: Path) -> list[str]:
    """``harness train``'s flags (but ``--out``) that make a learner's model for (app, setting)."""
    w = world(app, setting)
    return (["--policy", policy, "--instance", str(w.instance)] + (["--sweep", w.sweep] if w.sweep else [])
            + ["--name", model_file(policy, app, setting, model_dir).stem])


def deployments(policies: tuple[str, ...], app: str, setting: str, seed: int, model_dir: Path) -> dict[str, np.ndarray]:
    """Each policy's deployment of the instance (code form: what the baselines and learners optimise)."""
    g = world(app, setting).build()
    return {p: deployment(p, g, app, setting, seed, model_file(p, app, setting, model_dir)) for p in policies}


def deployment(policy: str, g, app: str, setting: str, seed: int, model: Path) -> np.ndarray:
    """A deployer's deployment of ``g`` (its randomness seeded by ``seed``), or a learner's by its
    ``model``, which must be trained on (app, setting)."""
    from harness.families.silgpo.baselines import DEPLOYERS

    if policy in DEPLOYERS:
        return DEPLOYERS[policy](g, np.random.default_rng(seed))
    return learned(policy, g, model, app, setting)


def learned(policy: str, g, path: Path, app: str, setting: str) -> np.ndarray:
    """A learner's deployment of ``g`` by its model at ``path``, which must be trained on this
    instance and setting (a model of another has the same sizes and would load silently)."""
    from harness.errors import UserError

    if not path.exists():
        raise UserError(f"no {policy} model for {app} {setting} here; make it with: harness train "
                        f"{' '.join(train_argv(policy, app, setting, path.parent))} --out {path.parent}", source=str(path))
    if policy == "sil-gpo":
        from harness.families.silgpo.agent import deploy, load_actor

        net, meta = load_actor(path, g)
    else:
        from harness.families.silgpo import rsdql as deploy_module

        net, meta = deploy_module.load_net(path, g)
        deploy = deploy_module.deploy
    w, trained = world(app, setting), meta.get("world_config") or {}
    generator = trained.get("generator", "harness") if trained.get("instance", -1) >= 0 else w.generator  # -1: theirs
    if (trained.get("instance", -1), trained.get("sweep"), generator) != (w.instance, w.sweep, w.generator):
        raise UserError(f"trained on instance {trained.get('instance', -1)} (generator: {generator}) setting "
                        f"{trained.get('sweep') or 'default'}, not on {app} {setting}", source=str(path))
    if trained.get("paper_form"):  # it sees the world in the paper's form: it deploys there (same sizes)
        from dataclasses import replace

        g = replace(w, paper_form=True).build()
    return deploy(g, net)


def play(cell, out: Path, model_dir: Path) -> list[dict]:
    """One cell in the model: every joining policy's summary (with its ``run_dir``)."""
    from harness.families.silgpo.world import delay, paper_units

    g = world(cell.app, cell.scenario).build()
    summaries = []
    for policy, X in deployments(cell.policies, cell.app, cell.scenario, cell.seed, model_dir).items():
        code, paper = delay(g, X), delay(paper_units(g), X)
        mean_ms = 1000 * float((paper.per_request * g.rate).sum() / g.rate.sum())  # a request's, as users would see
        s = {"policy": policy, "world": "sim", "seed": cell.seed, "mean_ms": mean_ms,
             "metrics": {"total_delay": code.total, "total_delay_s": paper.total, "unstable_queues": code.unstable},
             "deployment": np.asarray(X).tolist()}
        summaries.append(_written(s, out / "runs" / cell.track / cell.app / cell.scenario / f"{policy}-s{cell.seed}"))
    return summaries


def scenario_model():
    """The model of this world's scenario files (``harness run``)."""
    from harness.families.silgpo.live import ServiceGraphScenario

    return ServiceGraphScenario


def plays(scenario, names: list[str], model_dir: Path, cluster, deploy_seed: int = 0) -> dict:
    """Each policy's deployment of a scenario's instance, ready to play (``harness.families.silgpo.live``)."""
    from harness.families.silgpo.live import plays as build

    return build(scenario, names, model_dir, cluster, deploy_seed=deploy_seed)


def play_live(cell, out: Path, model_dir: Path, cluster) -> list[dict]:
    """One cell on the testbed, played through the common run as a scenario of this world: the
    deployments in turn, the rates scaled so the busiest queue of any of them runs at ρ 0.5;
    each ranked by the users' measured mean."""
    from harness.families.silgpo.live import ServiceGraphScenario
    from harness.scenarios.session import WorldSession, run_world_session

    sc = ServiceGraphScenario(world="servicegraph", name=f"{cell.track}-live", duration_s=LIVE_SECONDS,
                              description=f"leaderboard cell {cell.track} {cell.app} {cell.scenario} seed {cell.seed}",
                              instance=cell.app, setting=cell.scenario, load={"busiest_rho": LIVE_RHO})
    folder = out / "runs" / cell.track / cell.app / f"{cell.scenario}-live-s{cell.seed}"
    session = WorldSession(sc, plays(sc, list(cell.policies), model_dir, cluster, cell.seed), folder)
    summaries = []
    for s in run_world_session(cluster, session, seeds=1, first_seed=cell.seed):
        s = {**s, "world": "live", "deployment": session.plays[s["policy"]].X.tolist()}
        summaries.append(_written(s, Path(s["run_dir"])))
    return summaries


LIVE_RHO = 0.5  # light load: the ρ ≤ 0.5, where this host's drift does not decide the queueing
LIVE_SECONDS = 60.0


def _written(summary: dict, folder: Path) -> dict:
    """The run's ``summary.json`` (a live run's own, with these fields added)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "summary.json"
    whole = {**(json.loads(path.read_text()) if path.exists() else {}), **summary}
    path.write_text(json.dumps(whole))
    return {**summary, "run_dir": str(folder)}


register("servicegraph", sys.modules[__name__])
