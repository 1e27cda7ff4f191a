"""harness's μBench jobs against μBench's own code: the time of one job call, same parameters.

    .venv/bin/python -m benchmarks.mubench_loader --mubench PATH/TO/muBench [--python PY] [--calls 200]

PATH is a checkout of github.com/mSvcBench/muBench; PY an interpreter with ``jsonmerge`` (μBench's
Loader imports it), e.g. a venv made with ``pip install jsonmerge``. For each case μBench's
``CustomFunctions/Loader.py`` runs in that interpreter and harness's ``harness.workload.jobs`` here,
alternating in rounds so the machine's drift hits both alike; prints the mean time per call of
each with a 95 % CI and the difference (the bar: within 2 ms).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path

from harness.results.stats import mean_ci95
from harness.spec.jobs import Loader
from harness.workload.jobs import loader

CASES = {
    "loader {} (μBench's defaults: 10 ms sleep, ~11 kB answer)": {},
    "loader, sleep off, 1 kB answer": {"sleep_stress": {"run": False}, "mean_response_size": 1},
    "loader, cpu 200 digits × 2 trials, sleep off": {"cpu_stress": {"run": True, "range_complexity": [200, 200],
                                                                    "trials": 2}, "sleep_stress": {"run": False}},
}

MUBENCH_TIMER = """
import json, sys, time, importlib.util
spec = importlib.util.spec_from_file_location("mub_loader", sys.argv[1])
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
params, n = json.loads(sys.argv[2]), int(sys.argv[3])
mod.loader(params)  # μBench merges its defaults on the first call
out = []
for _ in range(n):
    t = time.perf_counter(); mod.loader(params); out.append((time.perf_counter() - t) * 1000)
print(json.dumps(out))
"""


def time_mubench(python: str, loader_py: Path, params: dict, n: int) -> list[float]:
    r = subprocess.run([python, "-c", MUBENCH_TIMER, str(loader_py), json.dumps(params), str(n)],
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def time_harness(params: dict, n: int) -> list[float]:
    p, rng = Loader.model_validate(params), random.Random(1)
    loader(p, rng)
    out = []
    for _ in range(n):
        t = time.perf_counter()
        loader(p, rng)
        out.append((time.perf_counter() - t) * 1000)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mubench", type=Path, required=True, help="a muBench checkout")
    ap.add_argument("--python", default=sys.executable, help="an interpreter with jsonmerge")
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=4)
    args = ap.parse_args()
    loader_py = args.mubench / "CustomFunctions" / "Loader.py"
    ok = True
    print(f"{'case':58s} {'μBench ms':>16s} {'harness ms':>16s} {'diff ms':>8s}  bar: |diff| ≤ 2 ms")
    for name, params in CASES.items():
        mub, har = [], []
        for _ in range(args.rounds):
            mub += time_mubench(args.python, loader_py, params, args.calls // args.rounds)
            har += time_harness(params, args.calls // args.rounds)
        (m, mh), (h, hh) = mean_ci95(mub), mean_ci95(har)
        good = abs(h - m) <= 2.0
        ok &= good
        print(f"{name:58s} {m:8.2f} ± {mh:5.2f} {h:8.2f} ± {hh:5.2f} {h - m:+8.2f}  {'PASS' if good else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
