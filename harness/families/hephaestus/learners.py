"""HephaestusForge's learners in its multi-cluster world, for ``harness train --policy ds-ppo``
and ``ds-dqn``."""

from __future__ import annotations

import time

from harness.families.hephaestus.ds_dqn import DsDqnArgs
from harness.families.hephaestus.ds_ppo import DsPpoArgs
from harness.families.hephaestus.world import MultiClusterConfig
from harness.policies.world_learners import WorldLearner, register


def _train(algo: str):
    def run(world, args, progress):
        from harness.families.hephaestus import ds_dqn, ds_ppo

        train = {"ppo": ds_ppo.train, "dqn": ds_dqn.train}[algo]
        rows: list[tuple] = []
        t0 = time.monotonic()
        total = args.total_steps * (args.envs if algo == "dqn" else 1)  # DQN counts steps of all its envs at once

        def seen(step, ret):
            rows.append((step, ret, time.monotonic() - t0))
            progress(step, total, ret)

        actor, _, secs = train(world, args, seen)
        return actor, {"seconds": secs}, rows, ("env_steps", "mean_return", "seconds"), \
            ("environment steps", "mean episodic return")
    return run


register(WorldLearner("ds-ppo", "multicluster", DsPpoArgs, MultiClusterConfig, _train("ppo")))
register(WorldLearner("ds-dqn", "multicluster", DsDqnArgs, MultiClusterConfig, _train("dqn")))
