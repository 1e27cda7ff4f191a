"""The rollout on REACH's latency model (issue 17's bar): within 5 % of `optimal` at 4 and 12 pods
on the three REACH apps, in under 100 ms per decision (placing all the pods of a scenario).

    .venv/bin/python -m studies.rollout.on_reach [--scenarios 10] [--base latency-greedy]

Quality: mean predicted latency over evaluate's scenarios (seeds 0..n-1), rollout vs `optimal`
(exhaustive) and vs its base policy. Speed: the time of one `place` call for all pods, median and
p99 over the scenarios, and as a ratio to the `default` placer's time on the same pods measured in
the same run (this machine's speed swings between runs). Prints PASS/FAIL lines; exits 1 on a FAIL.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from harness.policies import build
from harness.rescheduler.evaluate import SimWorld, run_policy, scenario, slots_for
from studies.common import REACH_APPS, dynamics


def place_times(dyn, policy, pods: int, seeds: list[int]) -> list[float]:
    out = []
    for seed in seeds:
        world = SimWorld(dyn, scenario(dyn, pods, seed))
        t0 = time.perf_counter()
        world.place(policy, slots_for(dyn, pods))
        out.append(time.perf_counter() - t0)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenarios", type=int, default=10)
    ap.add_argument("--base", default="latency-greedy")
    args = ap.parse_args()
    seeds = list(range(args.scenarios))
    rollout, base, default = build("rollout", base=args.base), build(args.base), build("default")
    checks = []
    print(f"{'app':22s} {'pods':>4s} {'rollout':>8s} {'optimal':>8s} {'gap':>6s} {args.base:>15s} "
          f"{'p50 ms':>7s} {'p99 ms':>7s} {'x default':>9s}")
    for app in REACH_APPS:
        _, _, dyn = dynamics(app)
        place_times(dyn, rollout, 4, [0])  # warm-up
        for pods in (4, 12, 20):
            r = run_policy(dyn, rollout, "rollout", pods, seeds)
            b = run_policy(dyn, base, args.base, pods, seeds)
            o = run_policy(dyn, build("optimal"), "optimal", pods, seeds) if pods < 20 else None
            t = np.array(place_times(dyn, rollout, pods, seeds)) * 1e3
            ref = np.median(place_times(dyn, default, pods, seeds)) * 1e3
            gap = None if o is None else r.latency_ms / o.latency_ms - 1
            print(f"{app:22s} {pods:4d} {r.latency_ms:8.2f} {'-' if o is None else f'{o.latency_ms:8.2f}':>8s} "
                  f"{'-' if gap is None else f'{gap:+.1%}':>6s} {b.latency_ms:15.2f} {np.median(t):7.1f} "
                  f"{np.percentile(t, 99):7.1f} {np.median(t) / ref:9.1f}")
            if gap is not None:
                checks.append((f"{app} {pods} pods: within 5 % of optimal", gap <= 0.05, f"{gap:+.2%}"))
                checks.append((f"{app} {pods} pods: under 100 ms per decision", np.percentile(t, 99) < 100,
                               f"p99 {np.percentile(t, 99):.1f} ms"))
    for name, ok, detail in checks:
        print(f"{'PASS' if ok else 'FAIL'}  {name}: {detail}")
    return 0 if all(ok for _, ok, _ in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
