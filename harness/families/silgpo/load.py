"""The users of SIL-GPO's world, live: open-loop Poisson arrivals of every request type at its
entry server, each carrying its chain (``graph_cell``), for a bounded time.

The load file: ``{"duration_s", "seed", "timeout_s", "types": [{"type", "rate", "entry":
"ip:port", "chain": [service, ...], "first_s"}]}`` (``harness.families.silgpo.live_plan.request_types``
with the entry servers' addresses). Each request is sent at its own time in its own task, so a
slow answer never delays the next (open loop); its latency counts from the time it was due.
Every request is one CSV row: ``t_send`` (Unix s), ``type``, ``latency_ms``, ``status`` (HTTP,
or 0 for a timeout or a refused connection), ``servers`` (the servers it went through). A
request still unanswered ``timeout_s`` after the load's end is a row with status 0.

    python -m harness.families.silgpo.load --load LOAD.json --out requests.csv
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import random
import time
from pathlib import Path

from aiohttp import ClientSession, ClientTimeout, TCPConnector

from harness.families.silgpo.cell import CHAIN, FIRST, SERVERS, TYPE

FIELDS = ("t_send", "type", "latency_ms", "status", "servers")


async def one(session: ClientSession, rtype: dict, due: float, rows: list) -> None:
    chain = rtype["chain"]
    headers = {CHAIN: ",".join(chain[1:]), FIRST: repr(rtype["first_s"]), TYPE: str(rtype["type"])}
    status, servers = 0, ""
    try:
        async with session.get(f"http://{rtype['entry']}/svc/{chain[0]}", headers=headers) as resp:
            await resp.read()
            status, servers = resp.status, resp.headers.get(SERVERS, "")
    except Exception:  # noqa: BLE001 - a timeout or refused connection is a failed request (status 0)
        pass
    rows.append((round(due, 6), rtype["type"], round((time.time() - due) * 1000, 3), status, servers))


async def arrivals(session: ClientSession, rtype: dict, t0: float, duration: float, rng: random.Random,
                   rows: list, tasks: set) -> None:
    """Type ``rtype``'s Poisson arrivals over [t0, t0 + duration)."""
    due = t0 + rng.expovariate(rtype["rate"])
    while due < t0 + duration:
        await asyncio.sleep(max(0.0, due - time.time()))
        task = asyncio.create_task(one(session, rtype, due, rows))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        due += rng.expovariate(rtype["rate"])


async def run(load: dict) -> list[tuple]:
    rows: list[tuple] = []
    tasks: set[asyncio.Task] = set()
    rng = random.Random(load.get("seed", 0))
    timeout = float(load.get("timeout_s", 60))
    async with ClientSession(connector=TCPConnector(limit=0), timeout=ClientTimeout(total=timeout)) as session:
        t0 = time.time() + 0.5
        streams = [arrivals(session, t, t0, float(load["duration_s"]), random.Random(rng.random()), rows, tasks)
                   for t in load["types"] if t["rate"] > 0]
        await asyncio.gather(*streams)
        if tasks:  # bounded: each request times out on its own
            await asyncio.wait(set(tasks), timeout=timeout + 5)
    return sorted(rows)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--load", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    rows = asyncio.run(run(json.loads(args.load.read_text())))
    with open(args.out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(FIELDS)
        w.writerows(rows)
    print(f"sent {len(rows)} requests, {sum(1 for r in rows if r[3] != 200)} failed")


if __name__ == "__main__":
    main()
