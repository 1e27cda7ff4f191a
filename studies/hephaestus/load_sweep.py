"""HephaestusForge's claims in the paper's world across loads: where the baselines reject 0.5-10 %
of the requests, do DS-PPO and DS-DQN reject fewer, for each of the three objectives?

    .venv/bin/python -m studies.hephaestus.load_sweep --rates 8,12,16,20 [--seeds 3] [--steps 200000]
        [--episodes 500] [--objectives cost,latency,inequality] [--algos ppo,dqn] [--jobs 2] [--probe] [--markdown]

The paper's world (§5.4: a request holds its room for its lifetime; ``hf_compat`` off), 4 clusters
of Table 4's types, R uniform in 1-7, mean lifetime 1: an arrival rate of λ per time unit keeps
about λ requests deployed at once. The code's rate (100) overloads the clusters about 4× (every
baseline rejects 46-64 %), so the claims are judged at the rates where they can differ.
``--probe``: the baselines alone over the rates (to choose them). Otherwise, for each rate, every
baseline, the two spread heuristics (``spread-ffd``, ``spread-bf1b1``: binpack, spreading when no
cluster has room) and, per objective and algorithm, ``--seeds`` models trained at that rate (the
paper trains and tests at one setting) and tested on the same ``--episodes`` episodes (test seed
10,000, never seen in training). Printed and written (``--out``, CSV): per rate and policy the
rejection % (mean ± 95 % CI over seeds for the agents), cost, latency and Gini; and per rate the
agents' rejection against the best heuristic's, as a ratio. The CSV is rewritten after every
model, and the rows it holds are not made again: a stopped sweep goes on where it stopped (a
DS-DQN model takes four to six minutes here, a DS-PPO model about three); run again when whole,
it only reports (``--markdown``: the rejections as the study's table).
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from harness.families.hephaestus.baselines import BASELINES, SPREAD_HEURISTICS
from harness.families.hephaestus.world import MultiClusterConfig
from harness.results.csvfile import write_rows
from harness.results.stats import mean_ci95
from studies.hephaestus.agents import TEST_SEED, test

MEASURES = ("rejection_pct", "cost", "latency_ms", "gini")


def heuristics() -> dict:
    return {**BASELINES, **SPREAD_HEURISTICS}


def config(rate: float, objective: str = "favorlat") -> MultiClusterConfig:
    """The paper's world at arrival rate ``rate`` (R 1-7, 4 clusters, mean lifetime 1)."""
    return MultiClusterConfig(arrival_rate=rate, objective=objective, hf_compat=False)


def trained(job: tuple) -> dict:
    """One model trained at (rate, objective, algo, seed) and tested: its row."""
    import torch

    from harness.families.hephaestus import ds_dqn, ds_ppo

    torch.set_num_threads(1)
    rate, objective, algo, seed, steps, episodes = job
    train, Args, act = {"ppo": (ds_ppo.train, ds_ppo.DsPpoArgs, ds_ppo.act),
                        "dqn": (ds_dqn.train, ds_dqn.DsDqnArgs, ds_dqn.act)}[algo]
    cfg = config(rate, objective)
    actor, _, secs = train(cfg, Args(total_steps=steps, seed=seed))
    m = test(lambda e: act(actor, e), cfg, episodes, TEST_SEED)
    return {"rate": rate, "policy": f"ds-{algo}({objective})", "seed": seed, "train_s": round(secs, 1),
            **dict(zip(MEASURES, (round(float(x), 4) for x in m)))}


def kept(out: Path) -> list[dict]:
    """The rows an earlier call wrote to ``out`` (typed as written), or none."""
    if not out.exists():
        return []
    import csv

    rows = []
    for r in csv.DictReader(open(out)):
        row = {"rate": float(r["rate"]), "policy": r["policy"], "seed": int(r["seed"]) if r["seed"] else "",
               "train_s": float(r["train_s"]) if r["train_s"] else ""}
        rows.append(row | {k: float(r[k]) for k in MEASURES})
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rates", default="8,12,16,20", help="arrival rates per time unit, comma-separated")
    ap.add_argument("--objectives", default="cost,latency,inequality")
    ap.add_argument("--algos", default="ppo,dqn")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=200_000, help="training steps (the authors' code's counting)")
    ap.add_argument("--episodes", type=int, default=500, help="test episodes per policy and rate")
    ap.add_argument("--jobs", type=int, default=2, help="trainings at once (one core each)")
    ap.add_argument("--probe", action="store_true", help="the heuristics alone over the rates")
    ap.add_argument("--out", type=Path, default=Path("results/hephaestus-load-sweep.csv"))
    ap.add_argument("--markdown", action="store_true", help="also the rejection % per rate and policy as a Markdown table")
    args = ap.parse_args()
    rates = [float(r) for r in args.rates.split(",")]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    rows = kept(args.out)
    have = {(r["rate"], r["policy"], r["seed"]) for r in rows}
    for rate in rates:
        for name, f in heuristics().items():
            if (rate, name, "") in have:
                continue
            m = test(lambda e, f=f: f(e), config(rate), args.episodes, TEST_SEED)
            rows.append({"rate": rate, "policy": name, "seed": "", "train_s": "",
                         **dict(zip(MEASURES, (round(float(x), 4) for x in m)))})
        shown = ", ".join(f"{r['policy']} {r['rejection_pct']:.2f}" for r in rows
                          if r["rate"] == rate and r["policy"] in heuristics())
        print(f"rate {rate:g}: rejection % {shown}", flush=True)
    if not args.probe:
        jobs = [(rate, o, a, s, args.steps, args.episodes) for rate in rates for o in args.objectives.split(",")
                for a in args.algos.split(",") for s in range(1, args.seeds + 1)
                if (rate, f"ds-{a}({o})", s) not in have]
        t0 = time.monotonic()
        with ProcessPoolExecutor(args.jobs) as pool:
            for k, row in enumerate(pool.map(trained, jobs), 1):
                rows.append(row)
                write_rows(args.out, rows)
                print(f"  [{k}/{len(jobs)} {time.monotonic() - t0:.0f} s] rate {row['rate']:g} {row['policy']} seed "
                      f"{row['seed']}: rejection {row['rejection_pct']:.3f} %, cost {row['cost']:.3f}, latency "
                      f"{row['latency_ms']:.1f} ms, Gini {row['gini']:.3f} (trained in {row['train_s']:.0f} s)", flush=True)
    write_rows(args.out, rows)
    report([r for r in rows if r["rate"] in rates], rates)
    if args.markdown:
        print("\n" + markdown([r for r in rows if r["rate"] in rates], rates))
    print(f"\npaper's world (hf_compat off), 4 clusters, R 1-7, mean lifetime 1, test seed {TEST_SEED}, "
          f"{args.episodes} test episodes; rows: {args.out}")
    return 0


def report(rows: list[dict], rates: list[float]) -> None:
    print(f"\n{'rate':>5s} {'policy':24s} {'seeds':>5s} {'rejection %':>16s} {'cost':>14s} {'latency ms':>16s} "
          f"{'Gini':>13s} {'rej. / best heuristic':>22s}")
    names = list(heuristics())
    for rate in rates:
        mine = [r for r in rows if r["rate"] == rate]
        best = min(r["rejection_pct"] for r in mine if r["policy"] in names)
        for policy in dict.fromkeys(r["policy"] for r in mine):
            runs = [r for r in mine if r["policy"] == policy]
            cells = []
            for key in MEASURES:
                m, h = mean_ci95([r[key] for r in runs])
                cells.append(f"{m:.3f} ± {h:.3f}" if h is not None else f"{m:.3f}")
            rej = np.mean([r["rejection_pct"] for r in runs])
            ratio = f"{rej / best:.2f}" if best > 0 else "-"
            print(f"{rate:5g} {policy:24s} {len(runs):5d} {cells[0]:>16s} {cells[1]:>14s} {cells[2]:>16s} "
                  f"{cells[3]:>13s} {ratio:>22s}")


def markdown(rows: list[dict], rates: list[float]) -> str:
    """Rejection % per policy (rows: the heuristics, then the agents) and rate (columns), the
    agents' mean ± 95 % interval over seeds; each rate's lowest mean in bold."""
    cells = {(r, p): mean_ci95([x["rejection_pct"] for x in rows if x["rate"] == r and x["policy"] == p])
             for r in rates for p in {x["policy"] for x in rows if x["rate"] == r}}
    low = {r: min((m for (rr, _), (m, _) in cells.items() if rr == r), default=None) for r in rates}
    lines = ["| rejection % | " + " | ".join(f"rate {r:g}" for r in rates) + " |", "|---|" + "---:|" * len(rates)]
    for p in dict.fromkeys(x["policy"] for x in rows):
        shown = []
        for r in rates:
            m, h = cells.get((r, p), (None, None))
            cell = "-" if m is None else f"{m:.2f} ± {h:.2f}" if h is not None else f"{m:.2f}"
            shown.append(f"**{cell}**" if m is not None and m == low[r] else cell)
        lines.append(f"| {p} | " + " | ".join(shown) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
