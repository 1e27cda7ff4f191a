"""Relative CPU speed of the provisioned testbed's node types: a fixed CPU-bound job on one node
of each type, interleaved; the CPU share each node's cgroup gives it, against the configured ratios
(the fastest type is the reference). See harness/testbed/speed.py for why shares, not wall times.

    .venv/bin/python -m benchmarks.cpu_ratio [--state-dir .harness] [--rounds 5]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.testbed.open import open_cluster
from harness.testbed.speed import speed_ratios


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--state-dir", type=Path, default=Path(".harness"))
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    res = speed_ratios(open_cluster(args.state_dir), args.rounds)
    worst = 0.0
    for t, r in res.items():
        err = r["slowdown"] / r["expected"] - 1
        worst = max(worst, abs(err))
        print(f"{t:10s} job {r['seconds'] * 1000:7.1f} ms  share {r['share']:.3f} cores  slowdown {r['slowdown']:.3f}  configured {r['expected']:.3f}  ({err:+.1%})")
    print(f"largest deviation {worst:.1%} (target within 10%, as the test)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
