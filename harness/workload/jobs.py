"""Internal jobs of a service cell, with μBench's parameters and meaning.

``compute_pi``: compute N digits of π, N drawn uniformly from ``range_complexity`` [X, Y];
answer ``mean_response_size`` kB on average (exponential), as μBench does.
``loader``: optional cpu (``trials`` × compute_pi on ``thread_pool_size`` threads), memory
(allocate ``memory_size`` kB, touch ``memory_io`` kB), disk (write ``disk_write_block_count``
blocks of ``disk_write_block_size`` bytes, fsync) and sleep (``sleep_time`` s) stress.
Every job is a plain function of (params, rng) so it runs in a worker thread, off the event loop.
"""

from __future__ import annotations

import os
import random
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable


def pi_digits(n: int) -> list[int]:
    """The first ``n`` decimal digits of π by the unbounded spigot (Gibbons 2006): CPU-bound,
    big-integer arithmetic whose cost grows faster than linearly with ``n``."""
    digits: list[int] = []
    q, r, t, k, m, x = 1, 0, 1, 1, 3, 3
    while len(digits) < n:
        if 4 * q + r - t < m * t:
            digits.append(m)
            q, r, m = 10 * q, 10 * (r - m * t), (10 * (3 * q + r)) // t - 10 * m
        else:
            q, r, t, k, m, x = q * k, (2 * q + r) * x, t * x, k + 1, (q * (7 * k + 2) + r * x) // (t * x), x + 2
    return digits


def _complexity(params: dict[str, Any], rng: random.Random) -> int:
    lo, hi = params.get("range_complexity", [50, 100])
    return rng.randint(int(lo), int(hi))


def _response_kb(params: dict[str, Any], rng: random.Random) -> float:
    mean = params.get("mean_response_size", params.get("mean_bandwidth", 1))
    return rng.expovariate(1.0 / mean) if mean > 0 else 0.0


def compute_pi(params: dict[str, Any], rng: random.Random) -> int:
    """Returns the response size in bytes."""
    pi_digits(_complexity(params, rng))
    return max(1, int(1000 * _response_kb(params, rng)))


def _cpu_stress(p: dict[str, Any], rng: random.Random) -> None:
    trials = int(p.get("trials", 1))
    sizes = [_complexity(p, rng) for _ in range(trials)]
    pool = int(p.get("thread_pool_size", 1))
    if pool <= 1 or trials <= 1:
        for n in sizes:
            pi_digits(n)
    else:
        with ThreadPoolExecutor(pool) as ex:
            list(ex.map(pi_digits, sizes))


def _memory_stress(p: dict[str, Any]) -> None:
    size = int(p.get("memory_size", 10000)) * 1000
    io = min(size, int(p.get("memory_io", 1000)) * 1000)
    buf = bytearray(size)
    step = 4096
    for off in range(0, io, step):  # touch pages: the allocation becomes real memory traffic
        buf[off] = 1
    del buf


def _disk_stress(p: dict[str, Any]) -> None:
    count = int(p.get("disk_write_block_count", 1000))
    block = b"m" * int(p.get("disk_write_block_size", 1024))
    fd, path = tempfile.mkstemp(prefix="mub-")
    try:
        for _ in range(count):
            os.write(fd, block)
        os.fsync(fd)
    finally:
        os.close(fd)
        os.unlink(path)


def loader(params: dict[str, Any], rng: random.Random) -> int:
    for key, run in (("cpu_stress", lambda p: _cpu_stress(p, rng)), ("memory_stress", _memory_stress),
                     ("disk_stress", _disk_stress), ("sleep_stress", lambda p: time.sleep(float(p.get("sleep_time", 0.01))))):
        p = params.get(key)
        if p and p.get("run", False):
            run(p)
    return max(1, int(1000 * _response_kb(params, rng)))


JOBS: dict[str, Callable[[dict[str, Any], random.Random], int]] = {"compute_pi": compute_pi, "loader": loader}
