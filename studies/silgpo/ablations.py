"""The ablations the paper lacks, on the authors' instance: SIL-GPO as the authors' code trains it
(GATv2 encoders, SIL by the code's on/off rule: on once an evaluation is 5 or more above the
best, off again at the best; the ranking's seeds), without SIL, with SIL always on (the paper's
Algorithm 1 has no switch; the code's rule leaves it off at most evaluations), and with MLP
encoders in place of graph attention — from the models ``studies.silgpo.trainings`` keeps;
nothing is trained here. ``--paper-form``: the same readings of the models trained and scored in
the paper's form of the delay (seconds), of which the queue trains the code's SIL rule and the
control without SIL.

    .venv/bin/python -m studies.silgpo.ablations [--episodes 2000] [--seeds 3] [--paper-form] [--models DIR] [--out results/silgpo]

Per variant and seed, from its greedy evaluations every 10 episodes: the final level (the mean
of the last ten), the best, and two readings of the learning speed — the episode at which it made
95 % of the way from its first evaluation to its own final level ("95 % of the final reward", the
issue's measure), and the episode at which it first came within 5 % of the best variant's final
level (one bar for all: a variant that ends worse reaches its own 95 % sooner for that alone).
Then each variant's mean with a 95 % interval over its seeds, and the paired differences (same
seed: the same initial nets and first episodes) of SIL on against off and of GAT against MLP.
Writes ``ablations.csv`` (one row per model) and ``ablations.png`` (every curve) in ``--out``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from harness.families.silgpo.baselines import DEPLOYERS
from harness.policies.world_learners import has_episodes
from harness.results.csvfile import write_rows
from harness.results.stats import mean_ci95
from harness.families.silgpo.world import code_instance, delay, paper_units
from studies.silgpo import MODELS, form
from studies.silgpo.agent import LOGGED, Run, model, standing

# (label, encoder, SIL rule): the paper's agent first, the one each ablation is paired against
VARIANTS = [("GAT + SIL, code's rule", "gat", "auto"), ("GAT, no SIL", "gat", "off"), ("GAT + SIL always", "gat", "on"),
            ("MLP + SIL, code's rule", "mlp", "auto")]
PAIRS = [("SIL by the code's rule − none", 0, 1), ("SIL always − none (GAT)", 2, 1), ("attention: GAT − MLP", 0, 3)]
WITHIN = 0.05  # the common bar: within 5 % of the best variant's final level


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--episodes", type=int, default=2000)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--models", type=Path, default=MODELS, help="where studies.silgpo.trainings keeps the models")
    ap.add_argument("--out", type=Path, default=Path("results/silgpo"), help="where ablations.csv and .png go")
    ap.add_argument("--paper-form", action="store_true",
                    help="the models trained in the paper's form of the delay (seconds), scored in it")
    args = ap.parse_args()
    g = paper_units(code_instance()) if args.paper_form else code_instance()
    stem = "ablations-paper" if args.paper_form else "ablations"
    runs: list[dict[int, Run]] = []
    for label, encoder, sil in VARIANTS:
        done = {}
        for seed in range(1, args.seeds + 1):
            path, _ = model(args.models, args.episodes, encoder, sil, False, seed, args.paper_form)
            if has_episodes(path, args.episodes):
                done[seed] = Run.of(path, g)
            else:
                print(f"{label}, seed {seed}: not ready ({standing(path)}; python -m studies.silgpo.trainings)")
        runs.append(done)
    if not any(runs):
        print(f"no ablation model of {args.episodes} episodes in {args.models}", file=sys.stderr)
        return 1
    bar = (1 + WITHIN) * min(np.mean([r.curve.final() for r in done.values()]) for done in runs if done)
    rows = [row(label, seed, r, bar) for (label, _, _), done in zip(VARIANTS, runs) for seed, r in done.items()]
    print(f"\n{args.episodes} episodes on the authors' instance, {form(args.paper_form)}; the common bar: total delay ≤ {bar:.3f} "
          f"(within {100 * WITHIN:.0f} % of the best variant's final level)\n")
    print(f"{'variant':26s} {'seed':>4s} {'first':>7s} {'final':>7s} {'best':>7s} {'last':>7s} "
          f"{'95 % by':>8s} {'bar by':>7s} {'SIL on':>7s} {'s/ep':>5s}")
    for r in rows:
        print(f"{r['variant']:26s} {r['seed']:4d} {r['first']:7.3f} {r['final']:7.3f} {r['best']:7.3f} {r['last']:7.3f} "
              f"{r['episode_95']:8d} {shown(r['episode_bar']):>7s} {r['sil_on']:7d} {r['s_per_episode']:5.2f}")
    print(f"\n{'variant':26s} {'seeds':>5s} {'final level':>16s} {'best':>16s} {'episode at 95 %':>18s} "
          f"{'episode at the bar':>22s}")
    for (label, _, _), done in zip(VARIANTS, runs):
        mine = [r for r in rows if r["variant"] == label]
        if not mine:
            continue
        reached = [r["episode_bar"] for r in mine if r["episode_bar"] is not None]
        print(f"{label:26s} {len(mine):5d} {ci(r['final'] for r in mine):>16s} {ci(r['best'] for r in mine):>16s} "
              f"{ci((r['episode_95'] for r in mine), 0):>18s} "
              f"{(ci(reached, 0) if reached else '—'):>14s} ({len(reached)}/{len(mine)})")
    print("\npaired by seed (the first minus the second):")
    for name, a, b in PAIRS:
        seeds = sorted(set(runs[a]) & set(runs[b]))
        if not seeds:
            print(f"  {name}: no seed done in both")
            continue
        final = [runs[a][s].curve.final() - runs[b][s].curve.final() for s in seeds]
        reach = [runs[a][s].reach95 - runs[b][s].reach95 for s in seeds]
        print(f"  {name:28s} seeds {','.join(map(str, seeds))}: final level {ci(final)}, "
              f"episode at 95 % {ci(reach, 0)}")
    greedy = delay(g, DEPLOYERS["preferred"](g, None)).total
    print(f"\nwrote {write_rows(args.out / f'{stem}.csv', rows)} and "
          f"{plot(runs, bar, greedy, args.out / f'{stem}.png', args.paper_form)}")
    return 0


def row(label: str, seed: int, r: Run, bar: float) -> dict:
    c = r.curve
    return {"variant": label, "seed": seed, "first": c.delay[0], "final": c.final(), "best": r.best, "last": r.last,
            "episode_95": r.reach95, "episode_bar": c.first_at(bar), "sil_on": sum(c.sil_on),
            "evaluations": len(c.delay), "s_per_episode": r.seconds_per_episode, "model": r.path.name}


def shown(episode: int | None) -> str:
    return "never" if episode is None else str(episode)


def ci(values, digits: int = 3) -> str:
    m, h = mean_ci95(list(values))
    return f"{m:.{digits}f} ± {h or 0:.{digits}f}"


def plot(runs: list[dict[int, Run]], bar: float, greedy: float, path: Path, paper_form: bool = False) -> Path:
    """Every variant's curves, one colour each, with the common bar and (the code's form) the
    authors' logged level."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for k, ((label, _, _), done) in enumerate(zip(VARIANTS, runs)):
        for j, (seed, r) in enumerate(sorted(done.items())):
            ax.plot(r.curve.episodes, r.curve.delay, color=f"C{k}", alpha=0.7, linewidth=1,
                    label=f"{label} (seeds {','.join(map(str, sorted(done)))})" if j == 0 else None)
    ax.axhline(bar, color="grey", linestyle="--", linewidth=1, label=f"the common bar ({bar:.2f})")
    if not paper_form:  # the authors' logs are in the code's form
        ax.axhline(LOGGED["converged"], color="red", linestyle=":", label="the authors' logged SIL-GPO")
    ax.axhline(greedy, color="black", linestyle="--", linewidth=1, label=f"the code's greedy ({greedy:.2f})")
    ax.set_ylim(top=min(ax.get_ylim()[1], 3.2 * greedy))  # the first, random evaluations would flatten the rest
    ax.set_xlabel("episode")
    ax.set_ylabel(f"greedy evaluation: total delay ({form(paper_form)})")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


if __name__ == "__main__":
    sys.exit(main())
