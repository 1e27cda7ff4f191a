"""What the service cell itself costs: max requests/s of a cell with an empty job vs a bare
aiohttp server (the cell's own stack), and the cell's added p50 latency, in one run on loopback.

    .venv/bin/python -m benchmarks.cell_cost [--seconds 5] [--connections 16] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

BARE = """
import sys
from aiohttp import web
async def h(request):
    return web.Response(body=b"m", content_type="text/plain")
app = web.Application()
app.router.add_get("/api/v1", h)
web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), print=None, access_log=None)
"""

EMPTY_APP = {"name": "bench", "gateway": "empty", "services": {
    "empty": {"internal_service": {"compute_pi": {"range_complexity": [0, 0], "mean_response_size": 0}}}}}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_up(port: int, proc: subprocess.Popen) -> None:
    for _ in range(300):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1", timeout=1).read()
            return
        except OSError:
            if proc.poll() is not None:
                raise SystemExit("server exited")
            time.sleep(0.05)
    raise SystemExit("server did not start")


async def load(port: int, seconds: float, conns: int) -> dict:
    from aiohttp import ClientSession, TCPConnector

    lat: list[float] = []
    url = f"http://127.0.0.1:{port}/api/v1"
    async with ClientSession(connector=TCPConnector(limit=0)) as s:
        until = time.perf_counter() + seconds

        async def user():
            while time.perf_counter() < until:
                t = time.perf_counter()
                async with s.get(url) as r:
                    await r.read()
                    assert r.status == 200
                lat.append(time.perf_counter() - t)
        start = time.perf_counter()
        await asyncio.gather(*(user() for _ in range(conns)))
        elapsed = time.perf_counter() - start
    lat.sort()
    return {"rps": len(lat) / elapsed, "p50_ms": 1000 * lat[len(lat) // 2], "requests": len(lat)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    (tmp / "app.json").write_text(json.dumps(EMPTY_APP))
    (tmp / "endpoints.json").write_text("{}")
    pb, pc = free_port(), free_port()
    servers = {
        "bare aiohttp": (pb, subprocess.Popen([sys.executable, "-c", BARE, str(pb)])),
        "cell, empty job": (pc, subprocess.Popen([sys.executable, "-m", "harness.workload.cell", "--app", str(tmp / "app.json"),
                                                  "--service", "empty", "--pod", "empty-1", "--node", "bench", "--port", str(pc),
                                                  "--host", "127.0.0.1", "--endpoints", str(tmp / "endpoints.json")])),
    }
    try:
        for port, proc in servers.values():
            wait_up(port, proc)
        res: dict[str, dict[str, list[float]]] = {k: {"rps": [], "p50_ms": []} for k in servers}
        for r in range(args.rounds):
            for name, (port, _) in servers.items():
                thr = asyncio.run(load(port, args.seconds, args.connections))  # throughput: many connections
                one = asyncio.run(load(port, min(2.0, args.seconds), 1))  # latency: one closed-loop user
                res[name]["rps"].append(thr["rps"])
                res[name]["p50_ms"].append(one["p50_ms"])
                print(f"round {r + 1} {name:16s} {thr['rps']:8.0f} req/s ({args.connections} conns)   "
                      f"p50 {one['p50_ms']:.3f} ms (1 user)")
        med = {k: {m: statistics.median(v) for m, v in d.items()} for k, d in res.items()}
        bare, cell = med["bare aiohttp"], med["cell, empty job"]
        print(f"\nmedian: cell {cell['rps']:.0f} req/s vs bare {bare['rps']:.0f} req/s: ratio {cell['rps'] / bare['rps']:.3f}")
        print(f"cell's added latency at p50: {cell['p50_ms'] - bare['p50_ms']:.3f} ms "
              f"({cell['p50_ms']:.3f} vs {bare['p50_ms']:.3f} ms); target under 2 ms")
    finally:
        for _, proc in servers.values():
            proc.kill()
            proc.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
