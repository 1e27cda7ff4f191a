"""REACH's (and RSDQL's) training time: quick recipes (``--recipe``, fast by default) trained in full
against the policy's committed recipe timed in the same run, half just before and half just after
each training; then REACH's quick models checked against issue 4's bar (studies.reach.quality's
checks) and RSDQL's against its committed model (studies.reach.vs_rsdql's paired comparison), on
the same scenarios.

This host's speed drifts up to 2x within minutes (2 cores shared with other work), so the figure
to compare across runs is the speed-up over the committed recipe measured beside it; the seconds
answer "can I train a model while the demo waits". ``before`` names REACH's fast recipe as it was
before this one (2 M steps, minibatches of 1024 on two threads), to time the change in one run.

    .venv/bin/python -m studies.reach.train_speed [--apps chain] [--seeds 1,2,3] [--recipe fast,before]
    .venv/bin/python -m studies.reach.train_speed --policy rsdql [--seeds 1,2,3]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from harness.families.reach.reach import Reach
from harness.families.reach.rsdql import Rsdql
from harness.policies import build
from harness.policies.learned import train_and_save, training_config
from harness.rescheduler.evaluate import run_policy
from harness.results.stats import mean_ci95
from studies.common import PROFILE, REACH_APPS, dynamics, model, verdict
from studies.reach.quality import evaluate_app

POLICIES = {"reach": Reach, "rsdql": Rsdql}
# REACH's previous fast recipe (147 s on an idle host; 547 s beside other work, its two
# update threads waiting on each other)
BEFORE = ["--total-steps", "2000000", "--num-envs", "128", "--num-steps", "32", "--minibatch", "1024",
          "--update-threads", "2", "--learning-rate", "0.001", "--ent-coef", "0.01", "--failed-at-start", "0.5",
          "--large-share", "0.5"]
TARGET_S = {"fast": 90, "four-minute": 240}  # issue 62's bar for the fast recipes; the four-minute one's name
PODS = (4, 12, 20)


def config(cls, recipe: str, extra: list[str]):
    """(Args, EnvConfig) of a recipe of the policy's, or of ``before`` (REACH's previous fast recipe)."""
    if recipe == "before":
        return training_config(cls, BEFORE + extra)
    return training_config(cls, extra, recipe)


def committed_seconds(cls, app: str, extra: list[str]) -> tuple[float, int]:
    """(seconds, steps) of the committed recipe's training alone (no model written), with extra flags."""
    args, env = training_config(cls, extra, "committed")
    _, _, dyn = dynamics(app, env=env)
    t = time.monotonic()
    cls.train(dyn, args)
    return time.monotonic() - t, args.total_steps


def timed_training(cls, app: str, recipe: str, extra: list[str], out: Path) -> tuple[float, int, float]:
    """(seconds, steps, final mean return) of training with the recipe (and extra flags) and writing
    the model ``out/<policy>-<app>.pt``, as ``harness train`` does."""
    args, env = config(cls, recipe, extra)
    a, prof, dyn = dynamics(app, env=env)
    t = time.monotonic()
    _, curve = train_and_save(cls, dyn, args, a.name, PROFILE.format(app=app), prof.testbed, out,
                              f"{cls.name}-{app}", force=True)
    return time.monotonic() - t, args.total_steps, curve[-1][1]


def against_committed(policy: str, app: str, model_dir: Path, scenarios: list[int]) -> list[tuple[str, bool, str]]:
    """A quick model against the committed one of the same policy, as studies.reach.vs_rsdql sets
    REACH against RSDQL: each scenario at 4, 12 and 20 pods a paired difference of mean latency.
    Passes unless the quick model is worse beyond the 95 % interval."""
    _, _, dyn = dynamics(app)
    quick, committed = (build(policy, model=str(model(policy, app, d))) for d in (model_dir, None))
    rel, shown = [], []
    for pods in PODS:
        lat = [np.array([run_policy(dyn, p, policy, pods, [s]).latency_ms for s in scenarios])
               for p in (quick, committed)]
        rel.append(100 * (lat[0] / lat[1] - 1))
        shown.append(f"{pods} pods {lat[0].mean():.1f} vs {lat[1].mean():.1f} ms")
    mean, half = mean_ci95(list(np.concatenate(rel)))
    return [(f"{app} {policy}: no worse than the committed model", mean - (half or 0) <= 0,
             f"{mean:+.2f} % ± {half or 0:.2f} paired over {len(PODS) * len(scenarios)} scenario-sizes ("
             f"{'; '.join(shown)})")]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--policy", default="reach", choices=sorted(POLICIES))
    ap.add_argument("--apps", default=",".join(REACH_APPS))
    ap.add_argument("--out", type=Path, default=Path("/tmp/reach-fast"), help="where the quick models go")
    ap.add_argument("--seeds", default="2", help="training seeds, comma-separated (every one reported)")
    ap.add_argument("--recipe", default="fast", help="quick recipes, comma-separated: the policy's (REACH's: "
                    f"{', '.join(Reach.recipes)}), or before (REACH's previous fast recipe)")
    ap.add_argument("--reference-steps", type=int, default=65_536,
                    help="steps of the committed recipe timed beside each training (half before, half after)")
    ap.add_argument("--steps", type=int, help="train the quick recipes for this many steps instead (a smoke run)")
    ap.add_argument("--no-checks", action="store_true", help="time only; skip the models' checks")
    ap.add_argument("--scenarios", type=int, default=10)
    ap.add_argument("--first-scenario", type=int, default=0)
    args = ap.parse_args()
    cls = POLICIES[args.policy]
    recipes = args.recipe.split(",")
    for r in recipes:
        if not (r in cls.recipes or (r == "before" and cls is Reach)):
            ap.error(f"no recipe {r!r}; {cls.name} has {', '.join(cls.recipes)}" + (", or before" if cls is Reach else ""))
    scenarios = list(range(args.first_scenario, args.first_scenario + args.scenarios))
    committed_steps = training_config(cls, [], "committed")[0].total_steps
    half = ["--total-steps", str(args.reference_steps // 2)]
    rows, checks = [], []
    for app in args.apps.split(","):
        committed_seconds(cls, app, ["--total-steps", "1024"])  # warm-up: the compiled simulator loaded, torch's first calls
        for recipe in recipes:
            for seed in args.seeds.split(","):
                s, out = ["--seed", seed], args.out / f"{cls.name}-{recipe}-seed{seed}"
                r1, n1 = committed_seconds(cls, app, s + half)
                q_s, q_n, ret = timed_training(cls, app, recipe, s + (["--total-steps", str(args.steps)] if args.steps
                                                                     else []), out)
                r2, n2 = committed_seconds(cls, app, s + half)
                ref_rate = (n1 + n2) / (r1 + r2)
                projected = committed_steps / ref_rate
                rows.append((app, recipe, seed, q_n, q_s, q_n / q_s, ref_rate, projected, ret))
                print(f"{app} {cls.name} {recipe} seed {seed}: committed recipe {ref_rate:,.0f} steps/s "
                      f"({committed_steps / 1e6:g} M steps ~ {projected:.0f} s); {recipe} {q_n / q_s:,.0f} steps/s, "
                      f"{q_n:,} steps in {q_s:.0f} s ({projected / q_s:.1f}x faster), final return {ret:.1f}",
                      flush=True)
                if args.no_checks:
                    continue
                if cls is Reach:
                    c = evaluate_app(app, out, scenarios)[1]
                else:
                    c = against_committed(cls.name, app, out, scenarios)
                checks += [(f"{recipe} seed {seed}, {name}", ok, detail) for name, ok, detail in c]
                if recipe in TARGET_S and not args.steps:
                    checks.append((f"{app}: {cls.name} {recipe} seed {seed} trains in <= {TARGET_S[recipe]} s",
                                   q_s <= TARGET_S[recipe], f"{q_s:.0f} s, {projected / q_s:.1f}x faster than the "
                                   f"committed recipe ({projected:.0f} s projected from the same run)"))
    print(f"\n{cls.name}: {'app':22s} {'recipe':12s} {'seed':>4s} {'steps':>9s} {'s':>6s} {'steps/s':>8s} "
          f"{'committed steps/s':>17s} {'committed s':>11s} {'speed-up':>8s} {'return':>7s}")
    for app, recipe, seed, n, secs, rate, ref_rate, projected, ret in rows:
        print(f"{cls.name}: {app:22s} {recipe:12s} {seed:>4s} {n:9,d} {secs:6.0f} {rate:8,.0f} {ref_rate:17,.0f} "
              f"{projected:11.0f} {projected / secs:7.1f}x {ret:7.1f}")
    for name, ok, detail in checks:
        print(f"{verdict(ok)}  {name}: {detail}")
    failed = sum(not ok for _, ok, _ in checks)
    if checks:
        print(f"{len(checks) - failed}/{len(checks)} checks pass; scenarios {scenarios[0]}..{scenarios[-1]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
