"""The users of SIL-GPO's world, live: open-loop Poisson arrivals of every request type at its
entry server, each carrying its chain (``harness.families.silgpo.cell``), for a bounded time.
Not Locust: the paper's users are independent Poisson streams per request type, each request
sent at its own time in its own task, so a slow answer never delays the next; its latency
counts from the time it was due.

The load file: ``{"duration_s", "seed", "timeout_s", "types": [{"type", "rate", "entry":
"ip:port", "chain": [service, ...], "first_s"}]}`` (``harness.families.silgpo.live_plan.request_types``
with the entry servers' addresses). The request log is a run directory's
(``harness.results.rundir.REQUEST_FIELDS``: ``entry`` is the request type, ``type-R``), plus
``servers``, the servers a request went through (space-separated), one row per request as it
ends, flushed twice a second. ``--ready`` gets the load's start time (Unix s) once the arrivals
are drawn up. A request with no answer ``timeout_s`` after it was due is a failed row; SIGTERM
stops the arrivals and writes every request still in flight as unfinished.

    python -m harness.families.silgpo.load --load LOAD.json --out requests.csv [--ready FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import itertools
import json
import random
import signal
import sys
import time
from pathlib import Path

from aiohttp import ClientSession, ClientTimeout, TCPConnector

from harness.families.silgpo.cell import CHAIN, FIRST, SERVERS, TYPE
from harness.loadgen import TIMED_OUT, UNFINISHED, WRITE_FAILED
from harness.results.rundir import REQUEST_FIELDS

FIELDS = (*REQUEST_FIELDS, "servers")


def entry_name(rtype: int) -> str:
    """A request type as the request log's ``entry``."""
    return f"type-{rtype}"


class Log:
    """The request log, one row per request as it ends; a row that cannot be written ends the
    process (WRITE_FAILED), as the Locust worker does."""

    def __init__(self, path: Path):
        self.f = open(path, "w", newline="")
        self.w = csv.writer(self.f)
        self.w.writerow(FIELDS)
        self.in_flight: dict[int, tuple[float, int]] = {}  # id -> (due, type)

    def row(self, due: float, rtype: int, ms: float, status: int, error: str, servers: str) -> None:
        try:
            self.w.writerow((f"{due:.6f}", f"{ms:.3f}", status, 0, error, "", entry_name(rtype), servers))
        except OSError as exc:
            print(f"cannot write {self.f.name}: {exc.strerror or exc}", file=sys.stderr, flush=True)
            sys.exit(WRITE_FAILED)

    def unfinished(self) -> None:
        for due, rtype in self.in_flight.values():
            self.row(due, rtype, 0.0, 0, UNFINISHED, "")
        self.in_flight.clear()


async def one(session: ClientSession, rtype: dict, due: float, log: Log, rid: int, timeout: float) -> None:
    chain = rtype["chain"]
    headers = {CHAIN: ",".join(chain[1:]), FIRST: repr(rtype["first_s"]), TYPE: str(rtype["type"])}
    status, servers, error = 0, "", ""
    try:
        async with session.get(f"http://{rtype['entry']}/svc/{chain[0]}", headers=headers,
                               timeout=ClientTimeout(total=max(0.1, due + timeout - time.time()))) as resp:
            await resp.read()
            status, servers = resp.status, resp.headers.get(SERVERS, "").replace(",", " ")
            error = "" if status == 200 else f"HTTP {status}"
    except asyncio.TimeoutError:
        error = TIMED_OUT
    except Exception as exc:  # noqa: BLE001 - a refused or broken connection is a failed request
        error = f"{type(exc).__name__}: {exc}"[:200].replace("\n", " ")
    if log.in_flight.pop(rid, None) is not None:
        log.row(due, rtype["type"], (time.time() - due) * 1000, status, error, servers)


async def arrivals(session: ClientSession, rtype: dict, t0: float, duration: float, rng: random.Random,
                   log: Log, tasks: set, timeout: float, ids) -> None:
    """Type ``rtype``'s Poisson arrivals over [t0, t0 + duration)."""
    due = t0 + rng.expovariate(rtype["rate"])
    while due < t0 + duration:
        await asyncio.sleep(max(0.0, due - time.time()))
        rid = next(ids)
        log.in_flight[rid] = (due, rtype["type"])  # from now on it has a row, whatever stops it
        task = asyncio.create_task(one(session, rtype, due, log, rid, timeout))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        due += rng.expovariate(rtype["rate"])


async def flush(log: Log) -> None:
    while True:
        await asyncio.sleep(0.5)
        try:
            log.f.flush()
        except OSError as exc:
            print(f"cannot write {log.f.name}: {exc.strerror or exc}", file=sys.stderr, flush=True)
            sys.exit(WRITE_FAILED)


async def run(load: dict, log: Log, ready: Path | None) -> None:
    tasks: set[asyncio.Task] = set()
    rng = random.Random(load.get("seed", 0))
    timeout = float(load.get("timeout_s", 30))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    flusher = asyncio.create_task(flush(log))
    async with ClientSession(connector=TCPConnector(limit=0)) as session:
        t0 = time.time() + 0.5
        if ready is not None:
            ready.write_text(f"{t0:.6f}\n")
        ids = itertools.count()
        streams = asyncio.gather(*(arrivals(session, t, t0, float(load["duration_s"]), random.Random(rng.random()),
                                            log, tasks, timeout, ids) for t in load["types"] if t["rate"] > 0))
        stopped = asyncio.create_task(stop.wait())
        await asyncio.wait({streams, stopped}, return_when=asyncio.FIRST_COMPLETED)
        if not stop.is_set() and tasks:  # the arrivals are over: the last requests, each bounded by its timeout
            await asyncio.wait({asyncio.gather(*tasks), stopped}, timeout=timeout + 5, return_when=asyncio.FIRST_COMPLETED)
        streams.cancel()
        for t in list(tasks):
            t.cancel()
        stopped.cancel()
    flusher.cancel()
    log.unfinished()
    log.f.close()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--load", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--ready", type=Path, help="file to write the load's start time (Unix s) into")
    args = ap.parse_args(argv)
    log = Log(args.out)
    asyncio.run(run(json.loads(args.load.read_text()), log, args.ready))
    print(f"requests written to {args.out}", flush=True)


if __name__ == "__main__":
    main()
