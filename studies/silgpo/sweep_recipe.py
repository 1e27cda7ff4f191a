"""Which recipe the sweeps of Figs 8-10 train SIL-GPO with, and why: two readings of the authors'
instance, from the models' greedy evaluations (``.curve.csv``; nothing is trained here,
``studies.silgpo.trainings`` trains them). The sweeps train Table II's recipe for its 2,000
episodes (``sweeps.RECIPE``), as the ranking does.

    .venv/bin/python -m studies.silgpo.sweep_recipe [--models studies/silgpo/models] [--light-seeds 3] [--full-seeds 5]

1. **The light recipe** (``agent.LIGHT``: MLP encoders, ×10 learning rates, 400 episodes)
   against the full one (Table II's: GAT, the paper's rates, 2,000 episodes; the ranking's
   seeds): each recipe's best evaluation (what the sweeps report for SIL-GPO at a point) and
   final level (the mean of the last ten), mean ± 95 % interval; light − full with Welch's
   interval in % of the full's mean. It stands in only when that interval's upper end is within
   ``TOLERANCE`` (an equivalence reading: a cheap stand-in has to show it is no worse).
2. **The full recipe stopped early.** The training loop reads the episode count only as where to
   stop (its learning rates decay over the code's 20,000 episodes whatever the count), so each
   seed's best within its first E episodes is what an E-episode training would report (the same
   process; bit for bit with the same code and compile setting). Printed per E: how many seeds
   are at their 2,000-episode best and the mean best; then the latest episode at which a seed
   first reached its best. On the authors' instance that leaves no margin below 2,000 for the
   sweeps' larger instances, so they train the full count.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from harness.families.silgpo.agent import Curve
from harness.families.silgpo.baselines import DEPLOYERS
from harness.families.silgpo.world import code_instance, delay
from harness.policies.world_learners import has_episodes
from harness.results.stats import mean_ci95, relative_difference_ci95
from studies.silgpo import MODELS, sweeps
from studies.silgpo.agent import LIGHT, light_model, model
from studies.silgpo.trainings import EPISODES as EPISODES_FULL

TOLERANCE = 0.02  # the light recipe's best shown within 2 % of the full recipe's


def curves(paths: list[Path], episodes: int) -> dict[int, Curve]:
    """The greedy evaluations of each finished model (seed → curve); the unfinished ones said."""
    done = {}
    for seed, path in enumerate(paths, 1):
        if has_episodes(path, episodes):
            done[seed] = Curve.read(path)
        else:
            print(f"{path.stem}: not ready (python -m studies.silgpo.trainings --list)", file=sys.stderr)
    return done


def verdict(light: list[float], full: list[float], tolerance: float = TOLERANCE) -> tuple[float, float | None, bool]:
    """(light − full in % of full's mean, the half-width of its 95 % interval in %, whether light
    stands in: the interval's upper end within ``tolerance``)."""
    pct, half_pct = relative_difference_ci95(light, full)
    return pct, half_pct, half_pct is not None and pct + half_pct <= 100 * tolerance


def latest_first_best(runs: dict[int, Curve]) -> int:
    """The latest episode at which a run first reached its own best."""
    return max(c.best_at() for c in runs.values())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", type=Path, default=MODELS, help="where studies.silgpo.trainings keeps the models")
    ap.add_argument("--light-seeds", type=int, default=3)
    ap.add_argument("--full-seeds", type=int, default=5)
    args = ap.parse_args()
    light = curves([light_model(args.models, s)[0] for s in range(1, args.light_seeds + 1)],
                   sweeps.episodes_in(LIGHT.split()))
    full = curves([model(args.models, EPISODES_FULL, "gat", "auto", False, s)[0]
                   for s in range(1, args.full_seeds + 1)], EPISODES_FULL)
    if len(full) < args.full_seeds:
        print(f"{len(full)} of the full recipe's {args.full_seeds} seeds are finished: the check needs all",
              file=sys.stderr)
        return 1
    g = code_instance()
    rng = np.random.default_rng(0)
    greedy = {n: delay(g, DEPLOYERS[n](g, rng)).total for n in ("preferred", "queue-greedy")}
    print(f"SIL-GPO on the authors' instance, the code's form of the total delay (the code's greedy "
          f"{greedy['preferred']:.3f}, queue-greedy {greedy['queue-greedy']:.3f}):")
    print(f"  {'recipe':40s} {'seeds':>5s} {'best':>16s} {'final level':>16s}   best per seed")
    for name, runs in ((f"full (Table II, {EPISODES_FULL} episodes)", full), (f"light ({LIGHT})", light)):
        if runs:
            (bm, bh), (fm, fh) = mean_ci95([c.best() for c in runs.values()]), mean_ci95([c.final() for c in runs.values()])
            print(f"  {name[:40]:40s} {len(runs):5d} {bm:8.3f} ± {bh or 0:5.3f} {fm:8.3f} ± {fh or 0:5.3f}   "
                  + ", ".join(f"{c.best():.3f}" for c in runs.values()))
    if len(light) >= 2:
        for what, read in (("best", Curve.best), ("final level", Curve.final)):
            pct, half, stands = verdict([read(c) for c in light.values()], [read(c) for c in full.values()])
            print(f"  light − full, {what}: {pct:+.2f} % ± {half or 0:.2f} (Welch, 95 %)"
                  + (f": the light recipe {'stands in' if stands else 'is not shown to stand in'} for the full "
                     f"one (that needs the interval's upper end within {100 * TOLERANCE:.0f} %)" if what == "best" else ""))
    print("\nthe full recipe stopped early (what an E-episode training would report):")
    for e in range(1000, EPISODES_FULL + 1, 100):
        at = sum(c.best(within=e) == c.best() for c in full.values())
        print(f"  {e:5d} episodes: {at} of {len(full)} seeds at their {EPISODES_FULL}-episode best, mean best "
              f"{np.mean([c.best(within=e) for c in full.values()]):.3f}")
    print(f"  the latest first best: episode {latest_first_best(full)}; the sweeps train {sweeps.EPISODES} "
          f"(instances of up to 116 placements against this one's 62)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
