"""HephaestusForge's Fig. 8 (rejection as the replicas per request R grow, 4 clusters) from the
authors' logs, beside harness's baselines in the authors' code's world, and the ablation the
paper lacks: heuristics that spread a request the agents' way when no cluster has room for it.

    git clone https://github.com/jpedro1992/HephaestusForge    # the logs are not copied into harness
    .venv/bin/python -m studies.hephaestus.fig8 HephaestusForge [--episodes 100] [--seeds 3] [--paper] [--first K]

Per R in 4, 8, 12, 16, 24, 32 (every request R replicas, as the authors' ratio runs set it):
each greedy baseline's rejection % in harness (mean over seeds with a 95 % interval) beside its
log (100 episodes), within ±5 points or not; harness's spread-ffd and spread-bf1b1; the logged DS
agents' rejection (the lowest of the v1 and v3 runs, every objective); and the share of the gap
between binpack-greedy and that agent which spreading alone closes:
(binpack − spread) / (binpack − agent). What is left is the part learning adds. ``--paper``:
the paper's semantics (a request holds its room for its lifetime); ``--first K``: the
baselines see the first K clusters only, as the authors' baseline script does (1 for Figs 8-9).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from harness.families.hephaestus.baselines import BASELINES, SPREAD_HEURISTICS
from harness.results.stats import mean_ci95
from harness.families.hephaestus.world import MultiClusterConfig, MultiClusterEnv
from studies.hephaestus.baselines import FIRST_HELP

RESULTS = "gym-multi-k8s/results/karmada"
REPLICAS = (4, 8, 12, 16, 24, 32)
LOGGED_NAMES = {"cpu-greedy": "cpu", "binpack-greedy": "binpack", "hf-latency-greedy": "latency",
                "karmada-greedy": "karmada"}
AGENTS = "{version}/multi/{objective}/{algo}_deepsets_env_karmada_num_clusters_4_reward_multi_totalSteps_200000_run_1/" \
         "testing/ratio/{i}_karmada_gym_results_num_clusters_4_replicas_{r}.csv"
BAR = 5.0  # points


def logged_rejection(path: Path) -> float | None:
    import pandas as pd

    return float(pd.read_csv(path)["ep_block_prob"].mean() * 100) if path.exists() else None


def best_agent(clone: Path, i: int, r: int) -> tuple[float, str] | None:
    found = []
    for version in ("v1", "v3"):
        for objective in ("cost", "latency", "inequality"):
            for algo in ("ppo", "dqn"):
                v = logged_rejection(clone / RESULTS / AGENTS.format(version=version, objective=objective, algo=algo,
                                                                     i=i, r=r))
                if v is not None:
                    found.append((v, f"DS-{algo.upper()} {objective} {version}"))
    return min(found) if found else None


def play(choose, r: int, episodes: int, seed: int, paper: bool = False, first: int = 0) -> float:
    env = MultiClusterEnv(MultiClusterConfig(replicas=(r, r), hf_compat=not paper), seed=seed)
    for _ in range(episodes):
        env.reset()
        done = False
        while not done:
            _, _, done, _ = env.step(choose(env, first))
    return 100 * float(np.mean([row["rejection"] for row in env.finished]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("clone", type=Path, help="a clone of jpedro1992/HephaestusForge")
    ap.add_argument("--episodes", type=int, default=100)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--paper", action="store_true", help="the paper's semantics: a request holds its room")
    ap.add_argument("--first", type=int, default=0, help=FIRST_HELP)
    args = ap.parse_args()
    if not (args.clone / RESULTS).is_dir():
        print(f"{args.clone}: not a clone of HephaestusForge (no {RESULTS})", file=sys.stderr)
        return 2
    t0, ok_all = time.monotonic(), True
    names = list(BASELINES) + list(SPREAD_HEURISTICS)
    print(f"{'R':>3s} " + " ".join(f"{n:>22s}" for n in names) + f" {'best logged DS agent':>32s} {'spread closes':>14s}")
    for i, r in enumerate(REPLICAS):
        cells, measured = [], {}
        for name in names:
            choose = {**BASELINES, **SPREAD_HEURISTICS}[name]
            m, h = mean_ci95([play(choose, r, args.episodes, seed, args.paper, args.first)
                              for seed in range(args.seeds)])
            measured[name] = m
            if name in LOGGED_NAMES:
                log = logged_rejection(args.clone / RESULTS / "baselines" / LOGGED_NAMES[name] / "ratio" /
                                       f"{i}_{LOGGED_NAMES[name]}_baselines_gym_num_clusters_4_replicas_{r}.csv")
                good = log is not None and abs(m - log) <= BAR
                ok_all &= good
                cells.append(f"{m:5.1f}±{h or 0:4.1f} ({log:5.1f}){'' if good else '*'}")
            else:
                cells.append(f"{m:5.1f}±{h or 0:4.1f}")
        agent = best_agent(args.clone, i, r)
        closes = ""
        if agent is not None:
            gap = measured["binpack-greedy"] - agent[0]
            spread = min(measured["spread-ffd"], measured["spread-bf1b1"])
            closes = f"{100 * (measured['binpack-greedy'] - spread) / gap:.0f} %" if gap > 0.5 else "no gap"
        label = f"{agent[0]:5.1f} {agent[1]}" if agent else "—"
        print(f"{r:3d} " + " ".join(f"{c:>22s}" for c in cells) + f" {label:>32s} {closes:>14s}", flush=True)
    print(f"rejection %, {'paper semantics' if args.paper else 'hf_compat'}"
          f"{f', the first {args.first} clusters' if args.first else ''}, 4 clusters, {args.seeds} seeds × "
          f"{args.episodes} episodes; (the authors' log); * more than {BAR:g} points from it; "
          f"{time.monotonic() - t0:.0f} s")
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
