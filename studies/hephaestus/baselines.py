"""HephaestusForge's four greedy baselines in harness's multi-cluster world, in the authors'
code's semantics (``hf_compat``), beside their published test logs (Table 8): no learning, so
their numbers test the world itself.

    .venv/bin/python -m studies.hephaestus.baselines [--episodes 2000] [--seeds 3] [--first K] [--replicas 1,8]

Per baseline: rejection %, cost, latency and Gini, the mean over each seed's episodes, then over
seeds with a 95 % interval (Student's t); beside them the logs' means (Table 8) and whether each
is within the bar (±5 % for cost, latency and Gini; ±0.1 point for rejection). ``--replicas``:
R uniform in [low, high) (the code's default 1,8; its training script passes 1,16).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from harness.families.hephaestus.baselines import BASELINES
from harness.results.stats import mean_ci95
from harness.families.hephaestus.world import MultiClusterConfig, MultiClusterEnv

# the authors' test logs' means (studies.hephaestus.logs; Table 8): rejection %, cost, latency ms, Gini
LOGGED = {"cpu-greedy": (0.186, 9.636, 422.788, 0.7212), "binpack-greedy": (0.186, 3.671, 420.699, 0.6696),
          "hf-latency-greedy": (3.742, 6.706, 347.768, 0.2589), "karmada-greedy": (0.186, 12.253, 424.047, 0.733)}
MEASURES = ("rejection %", "cost", "latency ms", "Gini")


FIRST_HELP = ("the baselines see the first K clusters only (0: every cluster), as the authors' baseline script "
              "does: 3 with the committed env's three spread actions, 1 with the env of the Fig. 8 and 9 logs")

def play(name: str, cfg: MultiClusterConfig, episodes: int, seed: int, first: int) -> np.ndarray:
    env, choose = MultiClusterEnv(cfg, seed=seed), BASELINES[name]
    for _ in range(episodes):
        env.reset()
        done = False
        while not done:
            _, _, done, _ = env.step(choose(env, first))
    rows = env.finished
    return np.array([[100 * r["rejection"], r["cost"], r["latency"], r["gini"]] for r in rows])


def within(name: str, k: int, value: float) -> bool:
    logged = LOGGED[name][k]
    return abs(value - logged) <= 0.1 if k == 0 else abs(value / logged - 1) <= 0.05


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--episodes", type=int, default=2000)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--first", type=int, default=0, help=FIRST_HELP)
    ap.add_argument("--replicas", default="1,8", help="R uniform in [low, high)")
    ap.add_argument("--paper", action="store_true", help="the paper's semantics instead of the code's")
    args = ap.parse_args()
    low, high = (int(x) for x in args.replicas.split(","))
    cfg = MultiClusterConfig(replicas=(low, high), hf_compat=not args.paper)
    print(f"{'baseline':18s} " + " ".join(f"{m + ' (logged)':>30s}" for m in MEASURES) + "   bar")
    ok_all, t0 = True, time.monotonic()
    for name in BASELINES:
        runs = [play(name, cfg, args.episodes, seed, args.first) for seed in range(args.seeds)]
        # an episode that accepted nothing has no cost or latency (the authors' code would stop on it)
        empty = sum(int(np.isnan(r[:, 1]).sum()) for r in runs)
        per_seed = [np.nanmean(r, axis=0) for r in runs]
        cells, ok = [], True
        for k in range(len(MEASURES)):
            mean, half = mean_ci95([s[k] for s in per_seed])
            good = within(name, k, mean)
            ok &= good
            cells.append(f"{mean:.3f}±{half if half is not None else float('nan'):.3f} ({LOGGED[name][k]:.3f}){'' if good else '*'}")
        ok_all &= ok
        print(f"{name:18s} " + " ".join(f"{c:>30s}" for c in cells) + f"   {'PASS' if ok else 'FAIL'}"
              + (f" ({empty} episodes accepted nothing)" if empty else ""), flush=True)
    print(f"{'hf_compat' if not args.paper else 'paper semantics'}, R in [{low}, {high}), "
          f"{f'the first {args.first} clusters' if args.first else 'every cluster'}; {args.seeds} seeds × {args.episodes} "
          f"episodes; * outside the bar (±5 %, rejection ±0.1 point); {time.monotonic() - t0:.0f} s")
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
