"""SIL-GPO's learners in its service-graph world, for ``harness train --policy sil-gpo`` and
``rsdql-deploy``: which instance a model trains on (``ServiceGraphWorld``), and the trainings,
both resumable (their models take hours here)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from harness.errors import UserError
from harness.families.silgpo.agent import SilGpoArgs
from harness.families.silgpo.rsdql import RsdqlDeployArgs
from harness.policies.world_learners import WorldLearner, register
from harness.rl.threads import torch_threads
from harness.spec.args import arg


GENERATORS = ("harness", "authors")


@dataclass
class ServiceGraphWorld:
    """Which instance of SIL-GPO's world a model is trained on."""

    instance: int = arg(-1, "-1: the authors' default instance (their generator, seed 3); n >= 0: a generated "
                            "instance of seed n")
    generator: str = arg("harness", "which generator draws instance n >= 0: harness (numpy; each service's "
                                    "preferred server by harness's rule) or authors (their code's random calls and "
                                    "rule: at seed 3, what their code trains on at each of Figs 8-10's settings)")
    sweep: Optional[str] = arg(None, "a setting of Figs 8-10: arrival=LOW,HIGH, chain=LOW,HIGH or requests=N")
    paper_form: bool = arg(False, "score the paper's form of the total delay (seconds), not the authors' code's")

    def build(self):
        """The instance; a bad setting is one UserError line."""
        from harness.families.silgpo.world import ServiceGraphConfig, code_instance, generate, parse_sweep

        cfg = ServiceGraphConfig(silgpo_compat=not self.paper_form)
        if self.sweep:
            try:
                cfg = cfg.sweep(*parse_sweep(self.sweep))
            except (ValueError, KeyError) as exc:
                raise UserError(f"{self.sweep!r} is not arrival=LOW,HIGH, chain=LOW,HIGH or requests=N ({exc})",
                                field="--sweep") from None
            if self.instance < 0:
                raise UserError("a setting of Figs 8-10 needs a generated instance (--instance n >= 0); the "
                                "authors' instance is the default setting", field="--sweep")
        if self.generator not in GENERATORS:
            raise UserError(f"{self.generator!r} is not a generator; one of {', '.join(GENERATORS)}", field="--generator")
        if self.instance < 0:
            return code_instance(cfg)
        if self.generator == "harness":
            return generate(cfg, self.instance)
        try:
            return code_instance(cfg, self.instance)
        except ValueError as exc:  # their preferred-server rule stops on some seeds
            raise UserError(f"the authors' generator stops at seed {self.instance}: {exc}", field="--instance") from None


# SIL-GPO's trainings run torch on one thread whoever calls them, so that a model comes out the same
# from `harness train`, the study's queue (one core a lane) or a test (harness.rl.threads); on
# graphs of a few hundred nodes a second thread gains little, and the compiled kernels use one
TRAINING_THREADS = 1


def _train_silgpo(g, args, progress, checkpoint=None, start=None):
    from harness.families.silgpo.agent import train

    with torch_threads(TRAINING_THREADS):
        actor, _, curve, secs = train(g, args, lambda e, d, sil: progress(e, args.episodes, d), checkpoint, start)
    return actor, {"seconds": secs, "best_delay": min(curve.delay, default=None),
                   "servers": g.N, "services": g.S}, curve.rows(), ("episode", "delay", "sil_on", "unstable"), \
        ("episode", "total delay of the greedy policy")


def _train_rsdql(g, args, progress, checkpoint=None, start=None):
    from harness.families.silgpo.rsdql import train

    with torch_threads(TRAINING_THREADS):
        net, curve, secs = train(g, args, lambda e, d: progress(e, args.episodes, d), checkpoint, start)
    rows = list(zip(curve.episodes, curve.delay))
    return net, {"seconds": secs, "best_delay": min(curve.delay, default=None), "servers": g.N, "services": g.S}, \
        rows, ("episode", "delay"), ("episode", "total delay of the greedy policy")


register(WorldLearner("sil-gpo", "servicegraph", SilGpoArgs, ServiceGraphWorld, _train_silgpo, True))
register(WorldLearner("rsdql-deploy", "servicegraph", RsdqlDeployArgs, ServiceGraphWorld, _train_rsdql, True))
