"""DS-PPO and DS-DQN training on the batched env (``MultiClusterVector``; DS-DQN's default) against N
scalar envs stepped in a loop (``batched=False``, the authors' loop), in turns within one run
(this machine's speed swings 2x within minutes: only same-run ratios count). Each round trains
each learner a short budget both ways from the same seed and reports transitions per second.

    .venv/bin/python -m benchmarks.ds_training_speed [--rounds 3] [--ppo-steps 40000] [--dqn-steps 5000]
"""

from __future__ import annotations

import argparse
import statistics

import torch

from harness.families.hephaestus import ds_dqn, ds_ppo
from harness.families.hephaestus.world import MultiClusterConfig


def rate(learner: str, batched: bool, steps: int) -> float:
    """Transitions per second of one short training."""
    cfg = MultiClusterConfig(objective="cost", hf_compat=True)
    if learner == "ds-ppo":
        _, _, secs = ds_ppo.train(cfg, ds_ppo.DsPpoArgs(total_steps=steps, batched=batched))
        return steps / secs
    args = ds_dqn.DsDqnArgs(total_steps=steps, learning_starts=steps // 5, batched=batched)
    _, _, secs = ds_dqn.train(cfg, args)
    return steps * args.envs / secs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ppo-steps", type=int, default=40_000)
    ap.add_argument("--dqn-steps", type=int, default=5_000, help="steps of all 8 envs together (the code's loop)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    ratios: dict[str, list[float]] = {"ds-ppo": [], "ds-dqn": []}
    for k in range(args.rounds):
        for learner, steps in (("ds-ppo", args.ppo_steps), ("ds-dqn", args.dqn_steps)):
            scalar, batched = rate(learner, False, steps), rate(learner, True, steps)
            ratios[learner].append(batched / scalar)
            print(f"round {k + 1} {learner}: scalar envs {scalar:8.0f} transitions/s, batched {batched:8.0f}: "
                  f"×{batched / scalar:.2f}", flush=True)
    for learner, r in ratios.items():
        print(f"{learner}: batched / scalar, median of {len(r)} rounds ×{statistics.median(r):.2f} "
              f"({', '.join(f'{x:.2f}' for x in r)})")


if __name__ == "__main__":
    main()
