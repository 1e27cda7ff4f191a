"""Measure the node-to-node round-trip matrix with real ICMP pings from inside the namespaces."""

from __future__ import annotations

import re
import statistics
import subprocess
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

from harness.testbed.local.layout import Layout

_TIME = re.compile(r"time=([0-9.]+) ms")
SPREAD_COUNT = 21  # pings per pair when their spread is measured: 20 after the first


def spread(times: list[float]) -> float:
    """The standard deviation of a pair's pings (0 from one)."""
    return statistics.pstdev(times) if len(times) > 1 else 0.0


def ping_ms(src_netns: str, dst_address: str, count: int = 6, interval: float = 0.05, timeout_s: float = 3,
            stat: Callable[[list[float]], float] = statistics.median) -> float | None:
    """Median RTT of ``count`` pings, the first left out (it pays for ARP); None if unreachable.
    ``stat=min``: the floor, the delay the injector adds without the host's load on top."""
    proc = subprocess.run(
        ["ip", "netns", "exec", src_netns, "ping", "-n", "-c", str(count), "-i", str(interval),
         "-W", str(timeout_s), "-w", str(int(timeout_s + count * interval + 1)), dst_address],
        capture_output=True, text=True,
    )
    times = [float(t) for t in _TIME.findall(proc.stdout)]
    if len(times) > 1:
        times = times[1:]
    return round(stat(times), 3) if times else None


def measure_matrix(layout: Layout, nodes: list[str] | None = None, count: int = 6,
                   stat: Callable[[list[float]], float] = statistics.median) -> dict[str, dict[str, float | None]]:
    """RTT in ms between every pair of (up) nodes, a few pairs at once, each once (RTT is symmetric):
    ``stat`` of each pair's ``count`` pings (the median; ``spread``: their standard deviation).

    Four at a time: every ping crosses the one user-space delayer (``delayer``), and sixteen
    concurrent streams on two cores made it add milliseconds of its own to the sub-millisecond pairs."""
    names = nodes if nodes is not None else [n.name for n in layout.nodes]
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    with ThreadPoolExecutor(max_workers=min(4, max(1, len(pairs)))) as pool:
        results = list(pool.map(lambda p: ping_ms(layout.node(p[0]).netns, layout.node(p[1]).address, count, stat=stat),
                                pairs))
    out: dict[str, dict[str, float | None]] = {a: {a: 0.0} for a in names}
    for (a, b), ms in zip(pairs, results):
        out[a][b] = out[b][a] = ms
    return {a: {b: out[a][b] for b in names} for a in names}
