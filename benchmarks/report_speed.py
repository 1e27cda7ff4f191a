"""Report build time for 5 policies x 3 seeds of 150-s runs (issue target: under 30 s).
Reference in the same run: only reading every run's files with pandas (no report can be faster).

    .venv/bin/python -m benchmarks.report_speed [--seconds 150]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from harness.results.collect import find
from harness.results.report import build
from tests.results.synthetic import make_run

POLICIES = {"default": 220.0, "reach": 200.0, "rsdql": 210.0, "cloud-first": 215.0, "latency-greedy": 240.0}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=150, help="length of each synthetic run")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp) / "session"
        for seed in (0, 1, 2):
            for i, (p, m) in enumerate(POLICIES.items()):
                make_run(d / f"{p}-s{seed}", p, seed, m, seconds=args.seconds, draw=10 * (seed + 1) + i)
        requests = sum(sum(1 for _ in open(f)) - 1 for f in d.glob("*/requests.csv"))
        t = time.perf_counter()
        col = find([d])
        read_s = time.perf_counter() - t
        t = time.perf_counter()
        build(find([d]), Path(tmp) / "report", baseline="default")
        build_s = time.perf_counter() - t
    print(f"15 runs, {requests:,} requests")
    print(f"reading the runs only: {read_s:6.2f} s")
    print(f"whole report:          {build_s:6.2f} s  ({build_s / read_s:.1f}x reading; target < 30 s)")
    return 0 if build_s < 30 and col.runs else 1


if __name__ == "__main__":
    sys.exit(main())
