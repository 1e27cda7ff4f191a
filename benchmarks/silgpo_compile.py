"""SIL-GPO's GAT training with ``--compile on`` against ``--compile off`` (eager), in turns within one
run (this machine's speed swings 2x within minutes: only same-run ratios count); and first, that both
compute the same: one batch of an episode's observations through the actor, outputs and gradients.

Per round and setting: a training of ``--episodes`` on the authors' instance from the same seed; the
seconds per episode between the first and the last greedy evaluation (every 10 episodes), so the
compile (paid in the first batch) is left out, and reported apart as the time to the first evaluation.

    .venv/bin/python -m benchmarks.silgpo_compile [--rounds 2] [--episodes 30] [--learner sil-gpo|rsdql-deploy]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch

from harness.families.silgpo import agent as silgpo, rsdql as rsdql_deploy
from harness.families.silgpo.gat import SilGpoNet, collate, for_speed
from harness.families.silgpo.env import DeployEnv
from harness.families.silgpo.world import code_instance


def same_results(g) -> tuple[float, float]:
    """(max |output difference|, max |gradient difference| / max |gradient|) on one episode's batch."""
    env, rng = DeployEnv(g), np.random.default_rng(0)
    obs = [env.reset()]
    while not env.done:
        obs.append(env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))[0])
    torch.manual_seed(0)
    net = SilGpoNet(g.N, g.S, g.N, "gat")
    outs, grads = [], []
    for model in (net, *for_speed((net,), "on", "gat")):
        net.zero_grad()
        out = model(collate(obs[:-1]))
        (out ** 2).sum().backward()
        outs.append(out.detach())
        grads.append(torch.cat([p.grad.flatten() for p in net.parameters()]))
    return float((outs[0] - outs[1]).abs().max()), float((grads[0] - grads[1]).abs().max() / grads[0].abs().max())


def seconds_per_episode(g, learner: str, compile_: str, episodes: int) -> tuple[float, float]:
    """(seconds per episode after the first evaluation, seconds to the first evaluation)."""
    stamps: list[tuple[int, float]] = []
    t0 = time.monotonic()
    if learner == "sil-gpo":
        silgpo.train(g, silgpo.SilGpoArgs(episodes=episodes, compile=compile_),
                     lambda e, d, sil: stamps.append((e, time.monotonic())))
    else:
        rsdql_deploy.train(g, rsdql_deploy.RsdqlDeployArgs(episodes=episodes, compile=compile_),
                           lambda e, d: stamps.append((e, time.monotonic())))
    (e0, t1), (e1, t2) = stamps[0], stamps[-1]
    return (t2 - t1) / (e1 - e0), t1 - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--episodes", type=int, default=30, help="per training; at least 20 (two evaluations)")
    ap.add_argument("--learner", default="sil-gpo", choices=["sil-gpo", "rsdql-deploy"])
    args = ap.parse_args()
    torch.set_num_threads(1)
    g = code_instance()
    out_diff, grad_diff = same_results(g)
    print(f"compiled against eager, one episode's batch: outputs differ by at most {out_diff:.2e}, "
          f"gradients by {grad_diff:.2e} of the largest", flush=True)
    ratios = []
    for k in range(args.rounds):
        (eager, e_first), (fast, c_first) = (seconds_per_episode(g, args.learner, c, args.episodes) for c in ("off", "on"))
        ratios.append(eager / fast)
        print(f"round {k + 1} {args.learner}: eager {eager:.2f} s/episode, compiled {fast:.2f} s/episode: "
              f"×{eager / fast:.2f} (to the first evaluation: {e_first:.0f} s eager, {c_first:.0f} s compiled)",
              flush=True)
    print(f"{args.learner}: eager / compiled, median of {len(ratios)} rounds ×{statistics.median(ratios):.2f} "
          f"({', '.join(f'{r:.2f}' for r in ratios)})")


if __name__ == "__main__":
    main()
