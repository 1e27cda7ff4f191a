"""The three sweeps of SIL-GPO's Figs 8-10 (arrival rate, chain length, number of requests) for
the deployment baselines, in the code's form of the total delay (what the figures plot), at the
values of the authors' parameter files (notes §7.2.4).

    .venv/bin/python -m studies.silgpo.sweeps [--seeds 3] [--only preferred,queue-greedy,mfds-fpr,helas]

Per point: each baseline's mean over generated instances (seeds 0..n-1, the code's values) with
a 95 % interval, the ranking, and the paper's HELAS / MFDS-FPR gaps to the best (the paper's
SIL-GPO margins are −32.6/−24.8 % (Fig. 8), −28.6/−20.7 % (Fig. 9), −35.2/−25.4 % (Fig. 10)
against HELAS/MFDS-FPR). SIL-GPO itself is not yet on harness (issue 41).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from harness.policies.deployment import DEPLOYERS
from harness.results.stats import mean_ci95
from harness.sim.servicegraph import ServiceGraphConfig, delay, generate

SWEEPS = {"arrival": [(1, 3), (2, 4), (3, 5), (4, 6), (5, 7)], "chain": [(2, 4), (3, 5), (4, 6), (5, 7), (6, 8)],
          "requests": [10, 20, 30, 40, 50]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--only", default="preferred,queue-greedy,mfds-fpr,helas")
    ap.add_argument("--figures", default=",".join(SWEEPS))
    args = ap.parse_args()
    names, t0 = args.only.split(","), time.monotonic()
    base = ServiceGraphConfig(silgpo_compat=True)
    for figure in args.figures.split(","):
        print(f"\nFig. {dict(arrival=8, chain=9, requests=10)[figure]}, {figure}:")
        print(f"  {'value':>8s} {'N':>4s} " + " ".join(f"{n:>17s}" for n in names) + "   ranking")
        for value in SWEEPS[figure]:
            cfg = base.sweep(figure, value)
            worlds = [generate(cfg, s) for s in range(args.seeds)]
            cells = {}
            for name in names:
                cells[name] = mean_ci95([delay(g, DEPLOYERS[name](g, np.random.default_rng(s))).total
                                         for s, g in enumerate(worlds)])
            rank = sorted(names, key=lambda n: cells[n][0])
            label = f"{value[0]}-{value[1]}" if isinstance(value, tuple) else str(value)
            print(f"  {label:>8s} {int(np.mean([len(g.to_place()) for g in worlds])):4d} "
                  + " ".join(f"{cells[n][0]:9.2f} ± {cells[n][1] or 0:5.2f}" for n in names)
                  + "   " + " < ".join(rank), flush=True)
    print(f"\n{args.seeds} generated instances per point; {time.monotonic() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
