"""Does the sweeps' light recipe stand in for the full one? On the authors' instance, the light
recipe's seeds (``sweeps.FAST``: MLP encoders, ×10 learning rates, 400 episodes) against the full
recipe's (the ranking's: GAT, Table II's rates, 2,000 episodes), from their greedy evaluations
(``.curve.csv``); nothing is trained here (``studies.silgpo.trainings`` trains both).

    .venv/bin/python -m studies.silgpo.light_check [--models studies/silgpo/models] [--light-seeds 3] [--full-seeds 5]

Per recipe: the best evaluation (what the sweeps report for SIL-GPO at each point) and the final
level (the mean of the last ten), mean ± 95 % interval over seeds; then light − full with Welch's
interval, in % of the full recipe's mean, beside the code's greedy and queue-greedy. The light
recipe stands in for the full one when its best is within ``TOLERANCE`` of the full's: a sweep
margin of SIL-GPO is then the full recipe's to within that much. Else the sweeps need the full
recipe (about 42 × 80 minutes here).
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
from studies.silgpo import MODELS
from studies.silgpo.agent import light_model, model
from studies.silgpo.trainings import EPISODES as EPISODES_FULL

TOLERANCE = 0.02  # light's best within 2 % of the full recipe's


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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", type=Path, default=MODELS, help="where studies.silgpo.trainings keeps the models")
    ap.add_argument("--light-seeds", type=int, default=3)
    ap.add_argument("--full-seeds", type=int, default=5)
    args = ap.parse_args()
    from studies.silgpo.sweeps import FAST

    flags = FAST.split()
    light_episodes = int(flags[flags.index("--episodes") + 1])
    light = curves([light_model(args.models, s)[0] for s in range(1, args.light_seeds + 1)], light_episodes)
    full = curves([model(args.models, EPISODES_FULL, "gat", "auto", False, s)[0]
                   for s in range(1, args.full_seeds + 1)], EPISODES_FULL)
    if len(light) < 2 or len(full) < 2:
        print(f"not enough finished models: {len(light)} light, {len(full)} full (two of each at least)",
              file=sys.stderr)
        return 1
    g = code_instance()
    rng = np.random.default_rng(0)
    greedy = {n: delay(g, DEPLOYERS[n](g, rng)).total for n in ("preferred", "queue-greedy")}
    print(f"SIL-GPO on the authors' instance, the code's form of the total delay (the code's greedy "
          f"{greedy['preferred']:.3f}, queue-greedy {greedy['queue-greedy']:.3f}):")
    print(f"  {'recipe':38s} {'seeds':>5s} {'best':>16s} {'final level':>16s}")
    for name, runs in ((f"full (GAT, {EPISODES_FULL} episodes)", full), (f"light ({FAST})", light)):
        (bm, bh), (fm, fh) = mean_ci95([min(c.delay) for c in runs.values()]), mean_ci95([c.final() for c in runs.values()])
        print(f"  {name[:38]:38s} {len(runs):5d} {bm:8.3f} ± {bh or 0:5.3f} {fm:8.3f} ± {fh or 0:5.3f}")
    for what, read in (("best", lambda c: min(c.delay)), ("final level", Curve.final)):
        pct, half, stands = verdict([read(c) for c in light.values()], [read(c) for c in full.values()])
        print(f"  light − full, {what}: {pct:+.2f} % ± {half or 0:.2f} (Welch, 95 %)")
        if what == "best":
            print(f"  the light recipe {'stands' if stands else 'does not stand'} in for the full one in the sweeps "
                  f"(its best within {100 * TOLERANCE:.0f} % of the full's, or below it)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
