"""A policy thinking 30 s in plan() during a pod-kill: the killed pod is restarted as soon as with
a policy that answers at once, the run ends on time, and its summary names the plan timeouts.

    .venv/bin/harness provision
    .venv/bin/python -m studies.reliability.slow_plan [--sleep 30] [--budget 10]

Chain (2 replicas), one closed-loop user, 90 s; a pod of ml killed at 30 s; rescheduling rounds
every 5 s with a plan budget of ``--budget`` s. Played with cloud-first and with
``studies.reliability.slow_policy:SlowPlanner`` (cloud-first's placement, ``--sleep`` s per plan);
printed per policy: the restart's seconds, errors, the run's length and its plan timeouts.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import yaml

from harness import shipped


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sleep", type=float, default=30)
    ap.add_argument("--budget", type=float, default=10)
    ap.add_argument("--out", type=Path, default=Path("results"))
    args = ap.parse_args()
    folder = args.out / f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-slow-plan"
    folder.mkdir(parents=True)
    sc = folder / "slow-plan.yaml"
    sc.write_text(yaml.safe_dump({
        "name": "slow-plan", "description": "a pod of ml killed at 30 s; rounds every 5 s", "duration_s": 90,
        "warmup_s": 5, "app": "chain", "replicas": 2, "load": {"mode": "closed", "steps": [{"at_s": 0, "value": 1}]},
        "faults": [{"at_s": 30, "kind": "pod-kill", "service": "ml"}],
        "rescheduler": {"period_s": 5, "start_s": 5, "max_moves": 4, "plan_budget_s": args.budget}}, sort_keys=False))
    env = {**os.environ, "HARNESS_SLOW_PLAN_S": str(args.sleep)}
    t = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "harness", "run", str(sc), "--policy",
                        "cloud-first,studies.reliability.slow_policy:SlowPlanner", "--out", str(folder)],
                       cwd=shipped.ROOT, env=env, capture_output=True, text=True)
    wall = time.monotonic() - t
    print(f"harness run: exit {r.returncode}, {wall:.0f} s for two 90-s runs")
    print("\n".join(line for line in r.stderr.splitlines() if line.startswith("harness:")))
    session = max(folder.glob("*-slow-plan"), key=lambda p: p.stat().st_mtime)
    print(f"{'policy':14s} {'restart s':>9s} {'errors':>6s} {'plan timeouts':>13s} {'policy errors':>13s} {'ended late s':>12s}")
    for run_dir in sorted(session.glob("*-s0")):
        s = json.loads((run_dir / "summary.json").read_text())
        with open(run_dir / "events.csv") as f:
            events = list(csv.DictReader(f))
        restart = [json.loads(e["detail"])["seconds"] for e in events if e["kind"] == "restarted"]
        start = next(float(e["t"]) for e in events if e["kind"] == "load-start")
        last = max(float(e["t"]) for e in events)
        print(f"{s['policy']:14s} {restart[0] if restart else '-':>9} {s.get('errors', 0):6d} "
              f"{s.get('plan_timeouts', 0):13d} {s.get('policy_errors', 0):13d} {last - start - 90:12.1f}")
    print(f"results in {session}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
