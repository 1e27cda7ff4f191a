"""REACH's training time: a quick recipe (``--recipe``, four-minute by default) trained in full
against the committed recipe (Table V's PPO) timed over a short run in the same process, and the
quick models checked against issue 4's bar (studies.reach.quality's checks, on the same
scenarios).

Timings on this machine swing 2x between runs, so the speed-up is the figure to compare across
runs; the absolute minutes answer "can I train a model in a coffee break".

    .venv/bin/python -m studies.reach.train_speed [--apps chain] [--out /tmp/reach-fast] [--seed 2] [--recipe fast]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from harness.policies.learned import train_and_save, training_config
from harness.families.reach.reach import Reach
from studies.common import PROFILE, REACH_APPS, dynamics, verdict
from studies.reach.quality import evaluate_app

TARGET_S = 240


def timed_training(app: str, recipe: str, extra: list[str], out: Path) -> tuple[float, int, float]:
    """(seconds, steps, final mean return) of training with the recipe (and extra flags)."""
    args, env = training_config(Reach, extra, recipe)
    a, prof, dyn = dynamics(app, env=env)
    t = time.monotonic()
    _, curve = train_and_save(Reach, dyn, args, a.name, PROFILE.format(app=app), prof.testbed, out,
                              f"reach-{app}", force=True)
    return time.monotonic() - t, args.total_steps, curve[-1][1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--apps", default=",".join(REACH_APPS))
    ap.add_argument("--out", type=Path, default=Path("/tmp/reach-fast"), help="where the fast models go")
    ap.add_argument("--seed", type=int, default=2)
    ap.add_argument("--recipe", default="four-minute", choices=sorted(Reach.recipes), help="the quick recipe")
    ap.add_argument("--reference-steps", type=int, default=65_536, help="steps of the committed recipe timed")
    ap.add_argument("--scenarios", type=int, default=10)
    ap.add_argument("--first-scenario", type=int, default=0)
    args = ap.parse_args()
    seeds = list(range(args.first_scenario, args.first_scenario + args.scenarios))
    seed = ["--seed", str(args.seed)]
    rows, checks = [], []
    committed_steps = training_config(Reach, [], "committed")[0].total_steps
    for app in args.apps.split(","):
        ref_s, ref_n, _ = timed_training(app, "committed", seed + ["--total-steps", str(args.reference_steps)],
                                         args.out / "reference")
        fast_s, fast_n, ret = timed_training(app, args.recipe, seed, args.out)
        projected = ref_s / ref_n * committed_steps
        rows.append((app, projected, fast_s, fast_n, ret))
        print(f"{app}: committed recipe {ref_n / ref_s:,.0f} steps/s (3 M steps ~ {projected:.0f} s); "
              f"{args.recipe} recipe {fast_n / fast_s:,.0f} steps/s, {fast_n:,} steps in {fast_s:.0f} s, final return {ret:.1f}",
              flush=True)
        _, c = evaluate_app(app, args.out, seeds)
        checks += [(f"{args.recipe} model, {name}", ok, detail) for name, ok, detail in c]
        checks.append((f"{app}: {args.recipe} recipe trains in <= {TARGET_S} s", fast_s <= TARGET_S,
                       f"{fast_s:.0f} s, {projected / fast_s:.1f}x faster than the committed recipe"))
    print(f"\n{'app':22s} {'committed s (projected)':>24s} {'quick s':>7s} {'speed-up':>9s} {'final return':>13s}")
    for app, projected, fast_s, _, ret in rows:
        print(f"{app:22s} {projected:24.0f} {fast_s:7.0f} {projected / fast_s:8.1f}x {ret:13.1f}")
    for name, ok, detail in checks:
        print(f"{verdict(ok)}  {name}: {detail}")
    failed = sum(not ok for _, ok, _ in checks)
    print(f"{len(checks) - failed}/{len(checks)} checks pass; scenarios {seeds[0]}..{seeds[-1]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
