"""Check that nodes run at their configured relative CPU speeds: the same CPU-bound job on one
node of each type, types interleaved round by round (the host's own speed drifts), compared as
per-round ratios to the fastest type."""

from __future__ import annotations

import statistics
import sys

from harness.errors import TestbedError
from harness.testbed.cluster import Cluster

CPU_JOB = """
import time
t = time.perf_counter()
x = 0
for i in range(4_000_000):  # ~0.3 s on the fastest type: many CFS periods, little noise
    x += i * i
print(time.perf_counter() - t)
"""


def job_seconds(cluster: Cluster, node: str) -> float:
    r = cluster.run_in_node(node, [sys.executable, "-c", CPU_JOB], timeout=120)
    if r.returncode != 0:
        raise TestbedError(f"CPU job failed on {node}: {r.stderr.strip()}")
    return float(r.stdout)


def speed_ratios(cluster: Cluster, rounds: int = 5) -> dict[str, dict[str, float]]:
    """Per node type: median job time (s), median slowdown vs the fastest type, and the expected
    slowdown from the configured speeds."""
    first: dict[str, str] = {}
    for n in cluster.nodes:
        first.setdefault(n.type, n.name)
    speed = {n.type: n.speed for n in cluster.nodes}
    ref = max(first, key=lambda t: speed[t])
    times: dict[str, list[float]] = {t: [] for t in first}
    ratios: dict[str, list[float]] = {t: [] for t in first}
    for _ in range(rounds):
        this = {t: job_seconds(cluster, node) for t, node in first.items()}
        for t in first:
            times[t].append(this[t])
            ratios[t].append(this[t] / this[ref])
    return {t: {"seconds": statistics.median(times[t]), "slowdown": statistics.median(ratios[t]),
                "expected": speed[ref] / speed[t], "rounds": [round(r, 3) for r in ratios[t]],
                "round_seconds": [round(x, 3) for x in times[t]]} for t in first}
