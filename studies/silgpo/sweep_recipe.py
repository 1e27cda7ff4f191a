"""Which recipe the sweeps of Figs 8-10 train SIL-GPO with, and why: two checks on the authors'
instance, from the models' greedy evaluations (``.curve.csv``; nothing is trained here,
``studies.silgpo.trainings`` trains them).

    .venv/bin/python -m studies.silgpo.sweep_recipe [--models studies/silgpo/models] [--light-seeds 3] [--full-seeds 5]

1. **The light recipe** (``agent.LIGHT``: MLP encoders, ×10 learning rates, 400 episodes)
   against the full one (Table II's: GAT, the paper's rates, 2,000 episodes; the ranking's
   seeds): each recipe's best evaluation (what the sweeps report for SIL-GPO at a point) and
   final level (the mean of the last ten), mean ± 95 % interval; light − full with Welch's
   interval in % of the full's mean. It stands in when its best is within ``TOLERANCE`` of the
   full's, or below.
2. **The full recipe stopped early.** Its learning rates decay over the code's 20,000 episodes
   whatever the count asked, so a training of E episodes is exactly the first E of a longer one:
   each seed's best within its first E episodes is what an E-episode training reports. Printed
   per E: how many seeds are at their 2,000-episode best; then the shortest E where all are,
   against the sweeps' ``sweeps.EPISODES``. Exit 1 when the sweeps' count falls short of it.
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
from harness.results.stats import difference_ci95, mean_ci95
from studies.silgpo import MODELS, sweeps
from studies.silgpo.agent import LIGHT, light_model, model
from studies.silgpo.trainings import EPISODES as EPISODES_FULL

TOLERANCE = 0.02  # the light recipe's best within 2 % of the full recipe's


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
    stands in: its mean within ``tolerance`` of full's, or below it)."""
    diff, half = difference_ci95(light, full)
    base = float(np.mean(full))
    pct = 100 * diff / base
    return pct, None if half is None else 100 * half / base, pct <= 100 * tolerance


def best_within(curve: Curve, episodes: int) -> float:
    """The best evaluation of the curve's first ``episodes`` episodes: what a training stopped
    there reports."""
    return min(d for e, d in zip(curve.episodes, curve.delay) if e <= episodes)


def shortest_at_best(runs: dict[int, Curve], step: int = 100) -> int:
    """The fewest episodes (a multiple of ``step``) by which every run had its overall best."""
    return max(step * -(-next(e for e, d in zip(c.episodes, c.delay) if d == min(c.delay)) // step)
               for c in runs.values())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", type=Path, default=MODELS, help="where studies.silgpo.trainings keeps the models")
    ap.add_argument("--light-seeds", type=int, default=3)
    ap.add_argument("--full-seeds", type=int, default=5)
    args = ap.parse_args()
    flags = LIGHT.split()
    light = curves([light_model(args.models, s)[0] for s in range(1, args.light_seeds + 1)],
                   int(flags[flags.index("--episodes") + 1]))
    full = curves([model(args.models, EPISODES_FULL, "gat", "auto", False, s)[0]
                   for s in range(1, args.full_seeds + 1)], EPISODES_FULL)
    if len(full) < 2:
        print(f"not enough finished models of the full recipe: {len(full)} (two at least)", file=sys.stderr)
        return 1
    g = code_instance()
    rng = np.random.default_rng(0)
    greedy = {n: delay(g, DEPLOYERS[n](g, rng)).total for n in ("preferred", "queue-greedy")}
    print(f"SIL-GPO on the authors' instance, the code's form of the total delay (the code's greedy "
          f"{greedy['preferred']:.3f}, queue-greedy {greedy['queue-greedy']:.3f}):")
    print(f"  {'recipe':40s} {'seeds':>5s} {'best':>16s} {'final level':>16s}   best per seed")
    for name, runs in ((f"full (Table II, {EPISODES_FULL} episodes)", full), (f"light ({LIGHT})", light)):
        if runs:
            (bm, bh), (fm, fh) = mean_ci95([min(c.delay) for c in runs.values()]), mean_ci95([c.final() for c in runs.values()])
            print(f"  {name[:40]:40s} {len(runs):5d} {bm:8.3f} ± {bh or 0:5.3f} {fm:8.3f} ± {fh or 0:5.3f}   "
                  + ", ".join(f"{min(c.delay):.3f}" for c in runs.values()))
    if len(light) >= 2:
        for what, read in (("best", lambda c: min(c.delay)), ("final level", Curve.final)):
            pct, half, stands = verdict([read(c) for c in light.values()], [read(c) for c in full.values()])
            print(f"  light − full, {what}: {pct:+.2f} % ± {half or 0:.2f} (Welch, 95 %)"
                  + (f": the light recipe {'stands' if stands else 'does not stand'} in for the full one "
                     f"(its best within {100 * TOLERANCE:.0f} % of the full's, or below)" if what == "best" else ""))
    print(f"\nthe full recipe stopped early (a training of E episodes is the first E of a longer one):")
    for e in range(1000, EPISODES_FULL + 1, 200):
        at = sum(best_within(c, e) == min(c.delay) for c in full.values())
        print(f"  {e:5d} episodes: {at} of {len(full)} seeds at their {EPISODES_FULL}-episode best, mean best "
              f"{np.mean([best_within(c, e) for c in full.values()]):.3f}")
    enough = shortest_at_best(full)
    ok = sweeps.EPISODES >= enough
    print(f"  every seed at its best by episode {enough}; the sweeps train {sweeps.EPISODES}: "
          + ("enough" if ok else "too few"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
