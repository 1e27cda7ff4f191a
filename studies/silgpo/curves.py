"""SIL-GPO's learning curves, as ``studies.silgpo.agent`` writes them (``<label>-seed<n>.csv``),
side by side: the ablations (GAT or MLP encoders, SIL on, off or by the code's rule) over the
same episodes.

    .venv/bin/python -m studies.silgpo.curves DIR [DIR ...] [--episodes 600] [--png curves.png]

Per label: the seeds found, the evaluated delay at the given episode (mean with a 95 % interval
over seeds), the best evaluation by then, and the episode at which each seed's evaluations first
reached 95 % of their improvement (first evaluation → best, by then); one PNG of every curve.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from collections import defaultdict
from pathlib import Path

from harness.policies.deployment import DEPLOYERS
from harness.policies.silgpo import Curve
from harness.results.stats import mean_ci95
from harness.sim.servicegraph import code_instance, delay
from studies.silgpo.agent import LOGGED


def read(path: Path) -> Curve:
    c = Curve()
    for row in csv.DictReader(path.open()):
        c.episodes.append(int(row["episode"]))
        c.delay.append(float(row["delay"]))
        c.sil_on.append(row["sil_on"] == "True")
    return c


def upto(c: Curve, episodes: int) -> Curve:
    keep = [i for i, e in enumerate(c.episodes) if e <= episodes]
    return Curve([c.episodes[i] for i in keep], [c.delay[i] for i in keep], [c.sil_on[i] for i in keep])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", type=Path, nargs="+")
    ap.add_argument("--episodes", type=int, default=600, help="compare every curve up to this episode")
    ap.add_argument("--png", type=Path, default=Path("silgpo-curves.png"))
    args = ap.parse_args()
    runs: dict[str, dict[int, Curve]] = defaultdict(dict)
    for d in args.dirs:
        for p in sorted(d.glob("*-seed*.csv")):
            m = re.match(r"(.+)-seed(\d+)\.csv$", p.name)
            c = upto(read(p), args.episodes)
            if m and c.episodes and c.episodes[-1] == args.episodes:
                runs[m.group(1)][int(m.group(2))] = c
    if not runs:
        print(f"no curve reaches episode {args.episodes} in {', '.join(map(str, args.dirs))}", file=sys.stderr)
        return 2
    print(f"{'label':18s} {'seeds':>9s} {'delay at ' + str(args.episodes):>18s} {'best by then':>16s} "
          f"{'episode at 95 %':>18s}")
    for label, seeds in sorted(runs.items()):
        last = mean_ci95([c.delay[-1] for c in seeds.values()])
        best = mean_ci95([min(c.delay) for c in seeds.values()])
        reach = [seeds[k].to_reach(0.95) for k in sorted(seeds)]
        print(f"{label:18s} {','.join(map(str, sorted(seeds))):>9s} {last[0]:9.2f} ± {last[1] or 0:5.2f} "
              f"{best[0]:8.2f} ± {best[1] or 0:5.2f} {str(reach):>18s}")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for k, (label, seeds) in enumerate(sorted(runs.items())):
        for j, (seed, c) in enumerate(sorted(seeds.items())):
            ax.plot(c.episodes, c.delay, color=f"C{k}", alpha=0.8, label=label if j == 0 else None)
    g = code_instance()  # every run of studies.silgpo.agent is on the authors' instance
    ax.axhline(delay(g, DEPLOYERS["preferred"](g, None)).total, color="black", linestyle="--", linewidth=1,
               label="the code's greedy")
    ax.axhline(LOGGED["converged"], color="red", linestyle=":", label="the authors' logged SIL-GPO")
    ax.set_xlabel("episode")
    ax.set_ylabel("greedy evaluation: total delay (code form)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(args.png, dpi=110)
    print(f"wrote {args.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
