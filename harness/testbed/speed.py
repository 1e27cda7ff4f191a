"""Check that nodes run at their configured relative CPU speeds.

The same CPU-bound job runs on one node of each type, types interleaved round by round. Each run
reports its wall time and the CPU time it got; their ratio is the node's CPU share (cores of
bandwidth its cgroup gives one busy thread). A node's slowdown is the fastest type's share over
its own.

Why shares and not plain wall times: on shared virtual machines the CPU time the same job needs
swings by up to 2x from minute to minute (seen on this project's CI machines: 0.26 to 0.50 s for
one job), which makes wall-time ratios of single runs flaky, while the share a cgroup gives stays
within about 1 % of its quota. Wall times are still reported for the eye.
"""

from __future__ import annotations

import statistics
import sys

from harness.errors import TestbedError
from harness.events import HOST_SPEED
from harness.testbed.cluster import Cluster

CPU_JOB = """
import time
wall, cpu = time.perf_counter(), time.process_time()
x = 0
for i in range(4_000_000):  # ~0.3 s on the fastest type: many CFS periods
    x += i * i
print(time.perf_counter() - wall, time.process_time() - cpu)
"""


def job_times(cluster: Cluster, node: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run of the job on ``node``."""
    r = cluster.run_in_node(node, [sys.executable, "-c", CPU_JOB], timeout=120)
    if r.returncode != 0:
        raise TestbedError(f"CPU job failed on {node}: {r.stderr.strip()}")
    wall, cpu = map(float, r.stdout.split())
    return wall, cpu


def speed_ratios(cluster: Cluster, rounds: int = 5) -> dict[str, dict]:
    """Per node type: median job wall time (s), median CPU share (cores), median slowdown vs the
    fastest type (ratio of shares, per round), and the slowdown expected from configured speeds."""
    first: dict[str, str] = {}
    for n in cluster.nodes:
        first.setdefault(n.type, n.name)
    speed = {n.type: n.speed for n in cluster.nodes}
    ref = max(first, key=lambda t: speed[t])
    walls: dict[str, list[float]] = {t: [] for t in first}
    shares: dict[str, list[float]] = {t: [] for t in first}
    for _ in range(rounds):
        for t, node in first.items():
            wall, cpu = job_times(cluster, node)
            walls[t].append(wall)
            shares[t].append(cpu / wall)
    ratios = {t: [r / s for r, s in zip(shares[ref], shares[t])] for t in first}  # per round
    return {t: {"seconds": statistics.median(walls[t]), "share": statistics.median(shares[t]),
                "slowdown": statistics.median(ratios[t]), "expected": speed[ref] / speed[t],
                "rounds": [round(r, 3) for r in ratios[t]],
                "round_seconds": [round(x, 3) for x in walls[t]]} for t in first}


def host_reference_ms(digits: int = 400, repeats: int = 5) -> float:
    """CPU milliseconds this host needs now for a fixed piece of the cells' own kind of work (π
    digits, big-integer arithmetic), median of ``repeats``. CPU time, not wall time: the cgroup
    quotas do not enter it, only how fast the host computes, which drifts (see above). The calling
    thread's CPU time: a run samples it from a helper thread while others work."""
    import time

    from harness.workload.jobs import pi_digits

    times = []
    for _ in range(repeats):
        t = time.thread_time()
        pi_digits(digits)
        times.append((time.thread_time() - t) * 1000)
    return statistics.median(times)


def host_samples(events: list[dict]) -> tuple[list[float], list[float]]:
    """(times, CPU ms) of a run's host-speed samples (its events of kind ``HOST_SPEED``)."""
    rows = [(e["t"], e["detail"]["cpu_ms"]) for e in events if e["kind"] == HOST_SPEED]
    return [t for t, _ in rows], [ms for _, ms in rows]
