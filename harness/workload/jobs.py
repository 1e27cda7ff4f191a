"""Internal jobs of a service cell, run as μBench runs them.

Parameters arrive typed, over μBench's defaults (:mod:`harness.spec.jobs`), so a key left out
means what it means in μBench. ``compute_pi``: N digits of π, N uniform in ``range_complexity``.
``loader``: cpu stress (``thread_pool_size`` threads, each drawing one N and computing N digits
``trials`` times), memory stress (``memory_size`` blocks of 1 kB, then ``memory_io`` reads and
writes), disk stress (write blocks, fsync, read them back in random order), sleep stress
(``sleep_time`` s; on by default). ``colosseum``: no work, a fixed 3070-byte answer. Each job
returns its answer's body, ``mean_response_size`` kB on average (exponential), made as μBench
makes it — ``compute_pi`` a run of one letter, ``loader`` random letters drawn one by one, which
costs a loader a few ms of CPU per 10 kB in μBench too. Every job is a plain function of
(params, rng) so it runs in a worker thread, off the event loop.
"""

from __future__ import annotations

import os
import random
import string
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from harness.spec.jobs import COLOSSEUM_BYTES, ComputePi, CpuStress, DiskStress, Loader, MemoryStress


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


def _complexity(range_complexity: list[int], rng: random.Random) -> int:
    lo, hi = range_complexity
    return rng.randint(lo, hi)


def _response_bytes(mean_kb: float, rng: random.Random) -> int:
    # μBench: max(1, 1000 · Exp(mean)) characters; a mean of 0 (which μBench cannot take) is 1 byte
    return max(1, int(1000 * rng.expovariate(1.0 / mean_kb))) if mean_kb > 0 else 1


def compute_pi(p: ComputePi, rng: random.Random) -> bytes:
    pi_digits(_complexity(p.range_complexity, rng))
    return b"m" * _response_bytes(p.mean_response_size, rng)


def _cpu_stress(p: CpuStress, rng: random.Random) -> None:
    sizes = [_complexity(p.range_complexity, rng) for _ in range(p.thread_pool_size)]

    def thread_job(n: int) -> None:  # one draw per thread, reused by every trial (as μBench)
        for _ in range(p.trials):
            pi_digits(n)

    if p.thread_pool_size == 1:
        thread_job(sizes[0])
    else:
        with ThreadPoolExecutor(p.thread_pool_size) as ex:
            list(ex.map(thread_job, sizes))


def _memory_stress(p: MemoryStress) -> None:
    blocks = [b"A" * 1000 for _ in range(p.memory_size)]
    for i in range(p.memory_io):
        _ = blocks[i % p.memory_size]  # a read, then a write of a fresh 1 kB block
        blocks[i % p.memory_size] = b"A" * 1000
    del blocks


def _disk_stress(p: DiskStress, rng: random.Random) -> None:
    fd, path = tempfile.mkstemp(prefix="mub-", suffix=f"-{p.tmp_file_name}")
    try:
        for _ in range(p.disk_write_block_count):
            os.write(fd, os.urandom(p.disk_write_block_size))
        os.fsync(fd)
        offsets = [i * p.disk_write_block_size for i in range(p.disk_write_block_count)]
        rng.shuffle(offsets)
        for off in offsets:
            os.pread(fd, p.disk_write_block_size, off)
    finally:
        os.close(fd)
        os.unlink(path)


def loader(p: Loader, rng: random.Random) -> bytes:
    if p.cpu_stress.run:
        _cpu_stress(p.cpu_stress, rng)
    if p.memory_stress.run:
        _memory_stress(p.memory_stress)
    if p.disk_stress.run:
        _disk_stress(p.disk_stress, rng)
    if p.sleep_stress.run:
        time.sleep(p.sleep_stress.sleep_time)
    letters = string.ascii_letters
    return "".join(rng.choice(letters) for _ in range(_response_bytes(p.mean_response_size, rng))).encode()


# a stand-in of μBench's picture, the same size: the answer is constant, its content is not measured
_COLOSSEUM = (b"colosseum " * (COLOSSEUM_BYTES // 10 + 1))[:COLOSSEUM_BYTES]


def colosseum(p: Any, rng: random.Random) -> bytes:
    return _COLOSSEUM


JOBS: dict[str, Callable[[Any, random.Random], bytes]] = {"compute_pi": compute_pi, "loader": loader, "colosseum": colosseum}
