"""REACH in simulation against issue 4's bar, per app: lower predicted latency than `default` and
`cloud-first` at 12 and 20 pods, within 5 % of `optimal` at 4 and 12 pods (where exhaustive
search runs), and fewer moves than pods. Prints a table and one PASS/FAIL line per check; exits
1 if any check fails.

    .venv/bin/python -m studies.reach.quality [--model-dir models] [--first-scenario 0]

Scenarios are the seeded background loads `harness evaluate` uses (seeds first..first+n-1).
Choose between candidate models on other seeds (e.g. --first-scenario 100) than the ones
you report (0..9, evaluate's), so the choice is not fitted to the reported scenarios.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import asdict
from pathlib import Path

from harness.policies import build
from harness.rescheduler.evaluate import run_policy, write_results
from studies.common import PROFILE, REACH_APPS, dynamics, model, verdict

GAP = 0.05


def bar(app: str, pods: int, latency: dict[str, float], reach_moves: float) -> list[tuple[int, str, bool, str]]:
    """Issue 4's bar at one size, on the policies' mean latencies: reach below default and
    cloud-first at 12 and 20 pods, within GAP of optimal at 4 and 12, fewer moves than pods.
    Each check as (kind, name, passed, detail)."""
    out = []
    r = latency["reach"]
    for base in ("default", "cloud-first"):
        if pods in (12, 20) and base in latency:
            out.append((0, f"{app} {pods} pods: reach < {base}", r < latency[base], f"{r:.2f} vs {latency[base]:.2f} ms"))
    if pods in (4, 12) and "optimal" in latency:
        gap = r / latency["optimal"] - 1
        out.append((1, f"{app} {pods} pods: within {GAP:.0%} of optimal", gap <= GAP,
                    f"{r:.2f} vs {latency['optimal']:.2f} ms, gap {gap:+.2%}"))
    out.append((2, f"{app} {pods} pods: reach moves < pods", reach_moves < pods, f"{reach_moves:.1f} moves on average"))
    return out


def evaluate_app(app: str, model_dir: Path | None, seeds: list[int], profile: str = PROFILE) -> tuple[list, list[tuple[str, bool, str]]]:
    _, _, dyn = dynamics(app, profile)
    policies = {"reach": build("reach", model=str(model("reach", app, model_dir))),
                "default": build("default"), "cloud-first": build("cloud-first"), "optimal": build("optimal")}
    plan = {4: ("reach", "optimal"), 12: ("reach", "default", "cloud-first", "optimal"),
            20: ("reach", "default", "cloud-first")}
    res = {(p, n): run_policy(dyn, policies[p], p, n, seeds) for n, ps in plan.items() for p in ps}
    checks = []
    for n in plan:
        lat = {p: res[p, n].latency_ms for p in plan[n] if res[p, n] is not None}
        checks += bar(app, n, lat, res["reach", n].moves)
    checks = [c[1:] for c in sorted(checks, key=lambda c: c[0])]  # by kind, then size, as ever
    rows = [dict(app=app, **asdict(r)) for r in res.values() if r is not None]
    return rows, checks


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model-dir", type=Path, help="where the models are (default: the committed ones)")
    ap.add_argument("--apps", default=",".join(REACH_APPS))
    ap.add_argument("--profile", default=PROFILE, help="the profile each app is judged on ({app} is the app's "
                    "name), e.g. profiles/{app}.reach-local.calibrated.json for a model trained on a calibrated one")
    ap.add_argument("--scenarios", type=int, default=10)
    ap.add_argument("--first-scenario", type=int, default=0)
    ap.add_argument("--out", type=Path, help="also write the results as CSV (JSON beside it)")
    args = ap.parse_args()
    seeds = list(range(args.first_scenario, args.first_scenario + args.scenarios))
    rows, checks = [], []
    t0 = time.monotonic()
    for app in args.apps.split(","):
        r, c = evaluate_app(app.strip(), args.model_dir, seeds, args.profile)
        rows += r
        checks += c
    print(f"{'app':22s} {'policy':12s} {'pods':>4s} {'latency ms':>11s} {'moves':>6s} {'moved':>6s}")
    for r in rows:
        print(f"{r['app']:22s} {r['policy']:12s} {r['pods']:4d} {r['latency_ms']:11.2f} {r['moves']:6.1f} "
              f"{r['moved_share']:6.0%}")
    for name, ok, detail in checks:
        print(f"{verdict(ok)}  {name}: {detail}")
    failed = sum(not ok for _, ok, _ in checks)
    print(f"{len(checks) - failed}/{len(checks)} checks pass; scenarios {seeds[0]}..{seeds[-1]}; "
          f"{time.monotonic() - t0:.0f} s")
    if args.out:
        write_results(rows, args.out)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
