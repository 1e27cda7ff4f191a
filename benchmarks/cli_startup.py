"""How fast `harness --help` answers, against the bare interpreter's start-up in the same run.

    .venv/bin/python -m benchmarks.cli_startup [--runs 10]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path


def timed(argv: list[str], runs: int) -> float:
    samples = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    harness = str(Path(sys.executable).with_name("harness"))
    bare = timed([sys.executable, "-c", "pass"], args.runs)
    help_ = timed([harness, "--help"], args.runs)
    status = timed([harness, "--state-dir", "/nonexistent", "teardown", "--help"], args.runs)
    print(f"python -c pass          {bare * 1000:7.1f} ms (reference)")
    print(f"harness --help          {help_ * 1000:7.1f} ms  ({help_ / bare:.1f}x the bare interpreter)")
    print(f"harness teardown --help {status * 1000:7.1f} ms  ({status / bare:.1f}x)")
    print("target: under 1000 ms —", "met" if help_ < 1.0 else "NOT met")
    return 0 if help_ < 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
