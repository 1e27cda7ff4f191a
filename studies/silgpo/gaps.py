"""Optimality gaps of the deployment baselines on tiny instances of SIL-GPO's world, where the
exact optimum can be enumerated (``harness.families.silgpo.baselines.optimal``).

    .venv/bin/python -m studies.silgpo.gaps [--instances 10] [--paper]

The tiny setting: 3 servers (one with GPUs), 4 microservices and 1 AI service, 5 requests (2 of
them AI) of 2-3 services; the code's form of the delay unless --paper. Per baseline: the mean
gap to the optimum over the instances with a 95 % interval, and how often it is optimal.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace

import numpy as np

from harness.families.silgpo.baselines import DEPLOYERS, optimal
from harness.results.stats import mean_ci95
from harness.families.silgpo.world import ServiceGraphConfig, delay, generate

TINY = ServiceGraphConfig(servers=3, hac=(2,), microservices=4, ai_services=1, requests=5, ai_requests=2,
                          chain=(2, 3), chain_ai_ms=(1, 2), chain_ai_ai=(1, 1), silgpo_compat=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--instances", type=int, default=10)
    ap.add_argument("--paper", action="store_true", help="the paper's form of the delay (seconds)")
    args = ap.parse_args()
    cfg = replace(TINY, silgpo_compat=not args.paper)
    t0 = time.monotonic()
    gaps: dict[str, list[float]] = {name: [] for name in DEPLOYERS}
    for seed in range(args.instances):
        g = generate(cfg, seed)
        best = delay(g, optimal(g)).total
        for name, deploy in DEPLOYERS.items():
            gaps[name].append(delay(g, deploy(g, np.random.default_rng(seed))).total / best - 1)
    print(f"{'baseline':14s} {'gap to the optimum':>22s} {'optimal':>8s}")
    for name in sorted(gaps, key=lambda n: np.mean(gaps[n])):
        m, h = mean_ci95(gaps[name])
        print(f"{name:14s} {100 * m:+10.2f} % ± {100 * (h or 0):6.2f} {sum(x < 1e-9 for x in gaps[name]):4d}/"
              f"{args.instances}")
    print(f"{args.instances} tiny instances, {'paper' if args.paper else 'code'} form; {time.monotonic() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
