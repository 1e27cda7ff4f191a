"""One edge server of SIL-GPO's world, live: every service instance deployed on it, as one
aiohttp process in the server's node.

The plan (``harness.families.silgpo.live_plan.server_plans``, plus ``addresses``: each server's
``ip:port``) says which services run here with how many instances, where each next service
may be sent, and the sizes. On ``GET /svc/{service}`` a request

1. waits out its packet's transmission if it enters here (header ``x-first-s``, eq. 33);
2. queues for the service: its instances here share one FIFO queue, each serving one request
   at a time for an exponential time of mean 1/μ (``mean_s``): an M/M/x queue, as the model's
   (the service's work is emulated: AI services need GPUs this host has not);
3. if its chain goes on (header ``x-chain``: the services after this one), waits out this
   service's output over the hop's bandwidth and calls the next service on a server drawn
   with eq. 52's shares (``routes``: the reachable servers hosting it, weighted by their
   instances); else waits out the return of the output over this server's bandwidth;
4. answers 200 with header ``x-servers``, the servers it went through (this one first), or 502
   if the chain's next service has no server to go to, or a downstream failure's status.

``/metrics`` (Prometheus): per service, the time in queue and service here
(``graph_sojourn_seconds``) and the requests served. ``/healthz`` answers 200.

    python -m harness.families.silgpo.cell --plan PLAN.json --port 8090 [--seed S]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import random
import time
from pathlib import Path

from aiohttp import ClientSession, ClientTimeout, TCPConnector, web
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest

CHAIN, FIRST, SERVERS, TYPE = "x-chain", "x-first-s", "x-servers", "x-type"
SOJOURN_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10)


class FifoServers:
    """``count`` servers before one first-come-first-served queue (asyncio's Semaphore does not
    promise the order in which waiters wake)."""

    def __init__(self, count: int):
        self.free = count
        self.waiting: collections.deque[asyncio.Future] = collections.deque()

    async def acquire(self) -> None:
        if self.free > 0 and not self.waiting:
            self.free -= 1
            return
        fut = asyncio.get_running_loop().create_future()
        self.waiting.append(fut)
        try:
            await fut  # a server is handed over by release(): free stays as it was
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():  # handed over just as the caller gave up: pass it on
                self.release()
            raise

    def release(self) -> None:
        while self.waiting:
            fut = self.waiting.popleft()
            if not fut.done():
                fut.set_result(None)
                return
        self.free += 1


class GraphCell:
    def __init__(self, plan: dict, seed: int | None = None):
        self.plan = plan
        self.server = str(plan["server"])
        self.addresses: list[str] = plan["addresses"]
        self.rng = random.Random(seed)
        self.queues = {s: FifoServers(v["instances"]) for s, v in plan["services"].items()}
        self.session: ClientSession | None = None
        self.registry = CollectorRegistry()
        self.m_sojourn = Histogram("graph_sojourn_seconds", "Time in queue and service at this server",
                                   ("service", "server"), buckets=SOJOURN_BUCKETS, registry=self.registry)
        self.m_served = Counter("graph_requests", "Requests served, by status", ("service", "server", "status"),
                                registry=self.registry)

    async def start(self, app: web.Application) -> None:
        self.session = ClientSession(connector=TCPConnector(limit=0, ttl_dns_cache=None),
                                     timeout=ClientTimeout(total=120))

    async def stop(self, app: web.Application) -> None:
        if self.session:
            await self.session.close()

    def pick(self, service: str) -> str | None:
        """The server the next service is sent to: eq. 52's shares, one draw."""
        routes = self.plan["routes"].get(service)
        if not routes:
            return None
        (target,) = self.rng.choices(routes, weights=[w for _, w, _ in routes])
        return target

    async def handle(self, request: web.Request) -> web.Response:
        service = request.match_info["service"]
        if service not in self.queues:
            return web.Response(status=404, text=f"{service} does not run on server {self.server}")
        if FIRST in request.headers:
            await asyncio.sleep(float(request.headers[FIRST]))
        queue = self.queues[service]
        t0 = time.perf_counter()
        await queue.acquire()
        try:
            await asyncio.sleep(self.rng.expovariate(1.0 / self.plan["services"][service]["mean_s"]))
        finally:
            queue.release()
        self.m_sojourn.labels(service, self.server).observe(time.perf_counter() - t0)
        rest = [s for s in request.headers.get(CHAIN, "").split(",") if s]
        status, path = 200, ""
        if rest:
            target = self.pick(rest[0])
            if target is None:
                status = 502
            else:
                _, _, s_per_mb = target
                await asyncio.sleep(self.plan["out_mb"][service] * s_per_mb)
                status, path = await self.call(target[0], rest, request.headers.get(TYPE, ""))
        else:
            await asyncio.sleep(self.plan["out_mb"][service] * self.plan["return_s_per_mb"])
        self.m_served.labels(service, self.server, str(status)).inc()
        servers = self.server + ("," + path if path else "")
        return web.Response(status=status, text="ok" if status == 200 else "chain failed", headers={SERVERS: servers})

    async def call(self, server: int, chain: list[str], rtype: str) -> tuple[int, str]:
        url = f"http://{self.addresses[server]}/svc/{chain[0]}"
        try:
            async with self.session.get(url, headers={CHAIN: ",".join(chain[1:]), TYPE: rtype}) as resp:
                await resp.read()
                return resp.status, resp.headers.get(SERVERS, "")
        except Exception:  # noqa: BLE001 - a refused, reset or timed-out call fails the chain
            return 503, ""

    async def healthz(self, request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def metrics(self, request: web.Request) -> web.Response:
        return web.Response(body=generate_latest(self.registry), headers={"Content-Type": CONTENT_TYPE_LATEST})


def build(cell: GraphCell) -> web.Application:
    app = web.Application()
    app.router.add_get("/svc/{service}", cell.handle)
    app.router.add_get("/healthz", cell.healthz)
    app.router.add_get("/metrics", cell.metrics)
    app.on_startup.append(cell.start)
    app.on_cleanup.append(cell.stop)
    return app


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--plan", type=Path, required=True, help="this server's plan, with every server's address")
    ap.add_argument("--host", default="0.0.0.0")
    ap.add_argument("--port", type=int, default=8090)
    ap.add_argument("--seed", type=int)
    args = ap.parse_args(argv)
    cell = GraphCell(json.loads(args.plan.read_text()), args.seed)
    web.run_app(build(cell), host=args.host, port=args.port, print=None, access_log=None, shutdown_timeout=5)


if __name__ == "__main__":
    main()
