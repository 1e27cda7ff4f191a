"""REACH against RSDQL in simulation (paper 000, Fig. 8): the committed models on the three REACH
apps at 4, 12 and 20 pods, the same scenarios for both, each scenario a paired difference; mean
and 95 % CI over the scenarios, beside the paper's -9.83 % (REACH's mean latency against RSDQL's
over 4/12/20 pods).

    .venv/bin/python -m studies.reach.vs_rsdql [--model-dir models] [--rsdql-dir DIR] [--scenarios 10]

``--rsdql-dir``: RSDQL's models from there, REACH's from ``--model-dir``: ``models/paper`` holds
RSDQL trained with no mask (``make rsdql-paper-models``: Table V's DQN, 3 M steps), which in CEEnv
learns to choose Idle.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from harness.policies import build
from harness.rescheduler.evaluate import run_policy
from harness.results.stats import mean_ci95
from studies.common import REACH_APPS, dynamics, model

PAPER = -9.83  # % (REACH, §VII-F)


def shown(rel: np.ndarray) -> str:
    mean, half = mean_ci95(list(rel))
    return f"{mean:+8.2f} % ± {half:5.2f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model-dir", type=Path, help="where the models are (default: the committed ones)")
    ap.add_argument("--rsdql-dir", type=Path, help="where RSDQL's models are (default: --model-dir's)")
    ap.add_argument("--apps", default=",".join(REACH_APPS))
    ap.add_argument("--pods", default="4,12,20")
    ap.add_argument("--scenarios", type=int, default=10)
    args = ap.parse_args()
    seeds = list(range(args.scenarios))
    print(f"{'app':22s} {'pods':>4s} {'REACH ms':>9s} {'RSDQL ms':>9s} {'REACH vs RSDQL':>22s}")
    every, means = [], {"reach": [], "rsdql": []}
    for app in args.apps.split(","):
        _, _, dyn = dynamics(app)
        dirs = {"reach": args.model_dir, "rsdql": args.rsdql_dir or args.model_dir}
        pols = {p: build(p, model=str(model(p, app, d))) for p, d in dirs.items()}
        per_app = []
        for pods in map(int, args.pods.split(",")):
            lat = {p: np.array([run_policy(dyn, pol, p, pods, [s]).latency_ms for s in seeds]) for p, pol in pols.items()}
            rel = 100 * (lat["reach"] / lat["rsdql"] - 1)  # per scenario
            for p in means:
                means[p].append(lat[p].mean())
            per_app.append(rel)
            print(f"{app:22s} {pods:4d} {lat['reach'].mean():9.2f} {lat['rsdql'].mean():9.2f} {shown(rel)}")
        rel = np.concatenate(per_app)
        every.append(rel)
        print(f"{app:22s} {'all':>4s} {'':9s} {'':9s} {shown(rel)}")
    rel = np.concatenate(every)
    print(f"\nREACH's mean latency against RSDQL's, every app and size: {shown(rel).strip()} "
          f"(95 % CI over {len(rel)} scenario-sizes); of the mean latencies: "
          f"{100 * (np.mean(means['reach']) / np.mean(means['rsdql']) - 1):+.2f} %; the paper: {PAPER:+.2f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
