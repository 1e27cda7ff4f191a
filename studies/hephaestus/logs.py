"""Paper 001 (HephaestusForge) Table 8 recomputed from its authors' published test logs, beside
the paper's numbers.

    git clone https://github.com/jpedro1992/HephaestusForge    # the logs are not copied into harness
    .venv/bin/python -m studies.hephaestus.logs HephaestusForge

A log (gym-multi-k8s/results/karmada/...) has one row per test episode (100 requests on 4
clusters): the share of requests rejected (ep_block_prob), the mean cost, latency and CPU use of
the cluster chosen, and the Gini coefficient. Table 8 is the mean over the 2,000 test episodes of
each; its ± is 1.96 standard errors. The paper sometimes rounds and sometimes cuts its digits off
(0.186 % is printed 0.18, 2.498 is 2.50): a value "matches" when rounding or cutting the mean as
the floating-point sum gives it, to the paper's digits, prints the paper's value.
The Latency-greedy log holds an aborted first run of 8 episodes before its 2,000: Table 8 used
all 2,008 rows (checked below both ways).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

RESULTS = "gym-multi-k8s/results/karmada"
AGENT = "v1/multi/{objective}/{algo}_deepsets_env_karmada_num_clusters_4_reward_multi_totalSteps_200000_run_1/testing/0_karmada_gym_results_num_clusters_4.csv"
COLUMNS = ("ep_block_prob", "avg_cost", "avg_latency", "avg_cpu_cluster_selected", "gini")
HEADS = ("rejection %", "cost", "latency ms", "CPU %", "Gini")

# Table 8 as printed: (label, log, (rejection %, cost, latency, CPU %, Gini))
TABLE8 = [
    ("DS-PPO (latency)", AGENT.format(objective="latency", algo="ppo"), ("0.02", "5.87", "268.6", "30.5", "0.67")),
    ("DS-DQN (latency)", AGENT.format(objective="latency", algo="dqn"), ("0.52", "7.03", "290.7", "27.5", "0.55")),
    ("DS-PPO (cost)", AGENT.format(objective="cost", algo="ppo"), ("0.05", "2.50", "414.1", "38.5", "0.58")),
    ("DS-DQN (cost)", AGENT.format(objective="cost", algo="dqn"), ("0.01", "2.53", "477.1", "38.5", "0.55")),
    ("DS-PPO (inequality)", AGENT.format(objective="inequality", algo="ppo"), ("0.002", "5.57", "533.6", "31.5", "0.48")),
    ("DS-DQN (balanced)", AGENT.format(objective="balanced", algo="dqn"), ("0.26", "3.07", "392.0", "37.0", "0.54")),
    ("CPU-greedy", "baselines/cpu/karmada_gym_results.csv", ("0.18", "9.63", "422.8", "18.5", "0.72")),
    ("Binpack-greedy", "baselines/binpack/karmada_gym_results.csv", ("0.18", "3.67", "420.7", "34.6", "0.66")),
    ("Latency-greedy", "baselines/latency/karmada_gym_results.csv", ("3.74", "6.71", "347.8", "25.5", "0.26")),
    ("Karmada-greedy", "baselines/karmada/karmada_gym_results.csv", ("0.18", "12.25", "424.1", "14.8", "0.73")),
]


def read_log(path: Path):
    import pandas as pd

    return pd.read_csv(path)


def matches(value: float, printed: str) -> bool:
    """Whether ``value`` rounded, or cut, to ``printed``'s decimals prints as ``printed``."""
    digits = len(printed.split(".")[1]) if "." in printed else 0
    cut = math.floor(value * 10 ** digits) / 10 ** digits
    return printed in (f"{value:.{digits}f}", f"{cut:.{digits}f}")


def means(df) -> list[float]:
    return [float(df[c].mean()) * (100 if c == "ep_block_prob" else 1) for c in COLUMNS]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("clone", type=Path, help="a clone of github.com/jpedro1992/HephaestusForge")
    args = ap.parse_args()
    root = args.clone / RESULTS
    if not root.is_dir():
        print(f"harness: error: {args.clone}: no {RESULTS} folder (expected a clone of jpedro1992/HephaestusForge)",
              file=sys.stderr)
        return 2
    print(f"Table 8 from the authors' test logs ({root}); paper's value in brackets, '=' where it matches "
          "(rounded or cut to the paper's digits)")
    print(f"{'':20s} {'episodes':>8s} " + " ".join(f"{h:>22s}" for h in HEADS))
    matched = total = 0
    missed = []
    rows = {}
    for label, rel, paper in TABLE8:
        df = read_log(root / rel)
        vals = means(df)
        rows[label] = (df, vals)
        cells = []
        for v, p in zip(vals, paper):
            ok = matches(v, p)
            matched += ok
            total += 1
            if not ok:
                missed.append(f"{label} {HEADS[len(cells)]}: {v!r} against {p}")
            cells.append(f"{v:.4g} [{p}]{'=' if ok else ' '}")
        print(f"{label:20s} {len(df):8d} " + " ".join(f"{c:>22s}" for c in cells))
    for label, col in (("DS-PPO (latency)", "avg_latency"), ("DS-PPO (cost)", "avg_cost")):
        df = rows[label][0]
        half = 1.96 * df[col].std(ddof=1) / np.sqrt(len(df))
        print(f"{label} {col}: {df[col].mean():.3f} ± {half:.3f} (1.96 standard errors)")
    lat = rows["Latency-greedy"][0]
    print(f"Latency-greedy over its last 2,000 episodes only: " +
          ", ".join(f"{h} {v:.4g}" for h, v in zip(HEADS, means(lat.iloc[-2000:]))))
    b, k = rows["Binpack-greedy"][1], rows["DS-PPO (inequality)"][1]
    print(f"headline ratios: cost Binpack / DS-PPO(cost) {b[1] / rows['DS-PPO (cost)'][1][1]:.2f} (paper 1.47), "
          f"latency Latency-greedy / DS-PPO(latency) {rows['Latency-greedy'][1][2] / rows['DS-PPO (latency)'][1][2]:.2f} "
          f"(paper 1.29), rejection Binpack / DS-PPO(inequality) {b[0]:.3f} % / {k[0]:.4f} % = {b[0] / k[0]:.0f}x (paper 90x)")
    print(f"{matched} of {total} values of Table 8 match" + "".join(f"\n  not: {m}" for m in missed))
    k_exact = rows["DS-PPO (inequality)"][0].ep_block_prob.sum() * 100 / len(rows["DS-PPO (inequality)"][0])
    print(f"DS-PPO (inequality) rejected {rows['DS-PPO (inequality)'][0].ep_block_prob.sum() * 100:.0f} of the "
          f"{100 * len(rows['DS-PPO (inequality)'][0])} test requests: {k_exact:.4f} %, which as a float is "
          f"{k[0]!r} and cuts to 0.002")
    return 0


if __name__ == "__main__":
    sys.exit(main())
