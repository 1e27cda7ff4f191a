"""HephaestusForge's Fig. 9 (rejection as the number of clusters grows) from the authors' logs,
and the claim it stands for tested here: a DeepSets agent trained on 4 clusters, unchanged, on 8,
12, 16 and 32 clusters, rejecting less than every heuristic.

    git clone https://github.com/jpedro1992/HephaestusForge    # the logs are not copied into harness
    .venv/bin/python -m studies.hephaestus.fig9 [HephaestusForge] [--objectives cost] [--seeds 3] [--episodes 200] [--paper]

Per number of clusters C: the authors' per-cluster test logs (``results/karmada/v1/per_cluster``,
100 episodes each: the four baselines, DS-PPO and DS-DQN per objective), then harness's four
baselines and the DS-PPO models trained on 4 clusters (one per seed; the size-free DeepSets actor
gives one logit per action row whatever C), each played on the same test episodes; rejection %
with a 95 % interval over the agents' seeds. The bar: the agents' mean below every heuristic's
at every C ("none rejects" where neither the agents nor some heuristic reject anything). In the
code's world by default (``hf_compat``); ``--paper`` for the paper's.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from harness.families.hephaestus.ds_ppo import DsPpoArgs, act, train
from harness.families.hephaestus.baselines import BASELINES, SPREAD_HEURISTICS
from harness.results.stats import mean_ci95
from harness.families.hephaestus.world import MultiClusterConfig
from studies.hephaestus.agents import TEST_SEED, test
from studies.hephaestus.fig8 import LOGGED_NAMES, RESULTS, logged_rejection
from studies.hephaestus.baselines import FIRST_HELP

CLUSTERS = (4, 8, 12, 16, 32)
PER_CLUSTER = "v1/per_cluster"


def logged(clone: Path, c: int) -> dict[str, float]:
    """Each method's logged rejection % at C clusters (file k_... for the k-th cluster count)."""
    k = CLUSTERS.index(c)
    out = {}
    for name, short in LOGGED_NAMES.items():
        v = logged_rejection(clone / RESULTS / PER_CLUSTER / f"baselines/{short}/{k}_{short}_baselines_gym_num_clusters_{c}.csv")
        if v is not None:
            out[name] = v
    for algo in ("ppo", "dqn"):
        for objective in ("cost", "latency", "inequality"):
            v = logged_rejection(clone / RESULTS / PER_CLUSTER / f"{algo}/{objective}/{k}_karmada_gym_results_num_clusters_{c}.csv")
            if v is not None:
                out[f"DS-{algo.upper()} {objective}"] = v
    return out


def rejection(choose, cfg: MultiClusterConfig, episodes: int) -> float:
    return float(test(choose, cfg, episodes, TEST_SEED)[0])  # agents.test's first measure: rejection %


def main() -> int:
    import torch

    torch.set_num_threads(1)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("clone", nargs="?", type=Path, help="a clone of jpedro1992/HephaestusForge (for the logs)")
    ap.add_argument("--objectives", default="cost")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=200_000)
    ap.add_argument("--episodes", type=int, default=200)
    ap.add_argument("--clusters", default=",".join(map(str, CLUSTERS)))
    ap.add_argument("--paper", action="store_true", help="the paper's semantics instead of the code's")
    ap.add_argument("--replicas", choices=("train", "per-cluster"), default="train",
                    help="test episodes' R: the training range (1-7) at every C, or the authors' per-cluster "
                         "runs' R in [C, 4C) (run_baselines.py's branch without test_replicas)")
    ap.add_argument("--first", type=int, default=0, help=FIRST_HELP)
    ap.add_argument("--train-replicas", default="1,8", help="the agents' training R range LOW,HIGH (R in [LOW, HIGH)); "
                    "4,16 is the per-cluster runs' range at 4 clusters")
    args = ap.parse_args()
    clusters = [int(c) for c in args.clusters.split(",")]
    compat = not args.paper
    agents: dict[str, list] = {}
    for objective in args.objectives.split(","):
        for seed in range(1, args.seeds + 1):
            t = time.perf_counter()
            low, high = (int(x) for x in args.train_replicas.split(","))
            actor, _, secs = train(MultiClusterConfig(clusters=4, objective=objective, hf_compat=compat,
                                                      replicas=(low, high)),
                                   DsPpoArgs(total_steps=args.steps, seed=seed))
            agents.setdefault(objective, []).append(actor)
            print(f"  ds-ppo({objective}) seed {seed}: trained on 4 clusters in {secs:.0f} s "
                  f"({time.perf_counter() - t:.0f} s with set-up)", file=sys.stderr, flush=True)
    heuristics = {**BASELINES, **SPREAD_HEURISTICS}
    names = list(heuristics)
    head = "".join(f"{n:>24s}" for n in names) + "".join(f"{'ds-ppo(' + o + ')':>22s}" for o in agents)
    print(f"{'C':>3s}{head}   bar   (the authors' log in brackets)")
    ok = True
    for c in clusters:
        logs = logged(args.clone, c) if args.clone else {}
        r = {"replicas": (c, 4 * c)} if args.replicas == "per-cluster" else {}
        cells, base = [], []
        for name in names:
            v = rejection(lambda e, f=heuristics[name]: f(e, args.first), MultiClusterConfig(clusters=c, hf_compat=compat, **r), args.episodes)
            if name in BASELINES:  # the bar is the paper's: its four heuristics
                base.append(v)
            cells.append(f"{v:8.2f} ({logs[name]:6.2f})" if name in logs else f"{v:8.2f}")
        means = []
        for objective, actors in agents.items():
            per_seed = [rejection(lambda e, a=a: act(a, e), MultiClusterConfig(clusters=c, objective=objective,
                                                                               hf_compat=compat, **r), args.episodes)
                        for a in actors]
            m, h = mean_ci95(per_seed)
            means.append(m)
            lg = logs.get(f"DS-PPO {objective}")
            cells.append(f"{m:6.3f}±{h or 0:5.3f}" + (f" ({lg:5.2f})" if lg is not None else ""))
        good = all(m < min(base) for m in means)
        tie = min(base) == 0 and all(m == 0 for m in means)  # nobody rejects: nothing to be below
        ok &= good or tie
        print(f"{c:>3d}" + "".join(f"{x:>24s}" for x in cells[:len(names)]) + "".join(f"{x:>22s}" for x in cells[len(names):])
              + f"   {'PASS' if good else 'none rejects' if tie else 'FAIL'}", flush=True)
    print(f"{'hf_compat' if compat else 'paper semantics'}, "
          f"R {'in [C, 4C)' if args.replicas == 'per-cluster' else '1-7'}, "
          f"{f'baselines on the first {args.first} clusters, ' if args.first else ''}models trained on 4 clusters ({args.steps} steps, "
          f"R in [{args.train_replicas.replace(',', ', ')})), "
          f"{args.seeds} seeds, {args.episodes} test episodes of 100 requests per C, test seed {TEST_SEED}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
