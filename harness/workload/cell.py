"""The service cell: one pod of one service of a μBench-style app, as an aiohttp server.

On ``/api/v1`` (μBench's path; GET or POST) it runs the service's internal job in a worker
thread, then its external groups in parallel, the calls inside a group in sequence, each with
its probability; any failed downstream call makes the answer HTTP 500. Trace headers are passed
on. ``/metrics`` exposes μBench's metric names labelled by service, node and pod, and by
μBench's own ``app_name`` (the service, as μBench's Kubernetes ``app`` label) and ``zone`` (the
node's site or tier here; "default" as μBench's deployer sets it on Kubernetes); ``/healthz``
answers 200 while the cell accepts work. Endpoints of other services come from a JSON file
(service -> ["ip:port", ...]) that the deployer rewrites; the cell rereads it when it changes
and balances over the replicas round-robin, as kube-proxy spreads connections.

    python -m harness.workload.cell --app APP.json --service S --pod P --node N --port 8080 --endpoints E.json
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import random
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from aiohttp import ClientSession, ClientTimeout, TCPConnector, web
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client import ProcessCollector

from harness.spec.app import App, ExternalGroup, load_app
from harness.workload.jobs import JOBS

API_PATH = "/api/v1"
TRACE_HEADERS = ("x-request-id", "traceparent", "tracestate", "x-b3-traceid", "x-b3-spanid",
                 "x-b3-parentspanid", "x-b3-sampled", "x-b3-flags", "uber-trace-id")
BUCKETS_MS = (0.5, 1, 2.5, 5, 10, 25, 50, 75, 100, 150, 200, 250, 300, 400, 500, 750, 1000, 2500, 5000, 10000)


class Endpoints:
    """Service -> replica addresses, reread from the deployer's file whenever it changes."""

    def __init__(self, path: Path):
        self.path = path
        self.mtime_ns = -1
        self.table: dict[str, list[str]] = {}
        self.cursors: dict[str, itertools.count] = {}

    def pick(self, service: str) -> str | None:
        try:
            st = os.stat(self.path)
            if st.st_mtime_ns != self.mtime_ns:
                self.table = json.loads(self.path.read_text())
                self.mtime_ns = st.st_mtime_ns
        except (OSError, ValueError):
            pass  # keep the last good table; a half-written file is never seen (atomic replace)
        replicas = self.table.get(service) or []
        if not replicas:
            return None
        cursor = self.cursors.setdefault(service, itertools.count(random.randrange(1 << 16)))
        return replicas[next(cursor) % len(replicas)]


class Cell:
    def __init__(self, app: App, service: str, pod: str, node: str, endpoints: Path, workers: int, seed: int | None,
                 zone: str = "default"):
        self.app, self.service, self.pod, self.node = app, service, pod, node
        self.spec = app.services[service]
        self.job = JOBS[self.spec.job]
        self.params = self.spec.job_params
        self.endpoints = Endpoints(endpoints)
        self.rng = random.Random(seed)
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="job")
        self.session: ClientSession | None = None
        self.accepting = True
        self.registry = CollectorRegistry()
        ProcessCollector(registry=self.registry)  # process_cpu_seconds_total: per-pod CPU usage
        labels = ("service", "node", "pod", "app_name", "zone")
        mk = lambda name, doc: Histogram(name, doc, labels, buckets=BUCKETS_MS, registry=self.registry)  # noqa: E731
        self.m_internal = mk("mub_internal_processing_latency_milliseconds", "Time of the internal job")
        self.m_external = mk("mub_external_processing_latency_milliseconds", "Time of all external calls")
        self.m_request = mk("mub_request_processing_latency_milliseconds", "Time of the whole request")
        self.m_size = Histogram("mub_response_size", "Size of the response body in bytes", labels,
                                buckets=(100, 1e3, 1e4, 1e5, 1e6, 1e7), registry=self.registry)
        self.m_requests = Counter("mub_requests", "Requests served by status", (*labels, "status"), registry=self.registry)
        self.m_in_flight = Gauge("mub_requests_in_flight", "Requests being served now", labels, registry=self.registry)
        self.lv = (service, node, pod, service, zone)

    async def start(self, app: web.Application) -> None:
        self.session = ClientSession(connector=TCPConnector(limit=0, ttl_dns_cache=None),
                                     timeout=ClientTimeout(total=60), auto_decompress=False)

    async def draining(self, app: web.Application) -> None:
        self.accepting = False

    async def stop(self, app: web.Application) -> None:
        if self.session:
            await self.session.close()
        self.pool.shutdown(wait=False, cancel_futures=True)

    async def call(self, callee: str, headers: dict[str, str]) -> bool:
        target = self.endpoints.pick(callee)
        if target is None:
            return False
        try:
            async with self.session.get(f"http://{target}{API_PATH}", headers=headers) as resp:
                await resp.read()
                return resp.status == 200
        except Exception:  # noqa: BLE001 - a refused, reset or timed-out call is a failed call
            return False

    async def run_group(self, group: ExternalGroup, headers: dict[str, str]) -> bool:
        chosen = group.services if group.seq_len >= len(group.services) else self.rng.sample(group.services, group.seq_len)
        ok = True
        for callee in chosen:  # in sequence
            if self.rng.random() < group.probabilities.get(callee, 1.0):
                ok &= await self.call(callee, headers)
        return ok

    async def handle(self, request: web.Request) -> web.Response:
        with self.m_in_flight.labels(*self.lv).track_inprogress():
            return await self._serve(request)

    async def _serve(self, request: web.Request) -> web.Response:
        t0 = time.perf_counter()
        headers = {h: request.headers[h] for h in TRACE_HEADERS if h in request.headers}
        loop = asyncio.get_running_loop()
        answer = await loop.run_in_executor(self.pool, self.job, self.params, self.rng)
        t1 = time.perf_counter()
        ok = True
        if self.spec.external_services:
            results = await asyncio.gather(*(self.run_group(g, headers) for g in self.spec.external_services))
            ok = all(results)
        t2 = time.perf_counter()
        internal_ms, external_ms, total_ms = (t1 - t0) * 1000, (t2 - t1) * 1000, (t2 - t0) * 1000
        self.m_internal.labels(*self.lv).observe(internal_ms)
        self.m_external.labels(*self.lv).observe(external_ms)
        self.m_request.labels(*self.lv).observe(total_ms)
        status = 200 if ok else 500
        self.m_requests.labels(*self.lv, str(status)).inc()
        body = answer if ok else b"downstream call failed"
        self.m_size.labels(*self.lv).observe(len(body))
        return web.Response(body=body, status=status, content_type="text/plain", headers={
            **headers, "x-pod": self.pod, "x-node": self.node,
            "x-internal-ms": f"{internal_ms:.3f}", "x-external-ms": f"{external_ms:.3f}"})

    async def healthz(self, request: web.Request) -> web.Response:
        return web.Response(text="ok" if self.accepting else "draining", status=200 if self.accepting else 503)

    async def metrics(self, request: web.Request) -> web.Response:
        return web.Response(body=generate_latest(self.registry), headers={"Content-Type": CONTENT_TYPE_LATEST})


def build(cell: Cell) -> web.Application:
    app = web.Application()
    app.router.add_route("GET", API_PATH, cell.handle)
    app.router.add_route("POST", API_PATH, cell.handle)
    app.router.add_get("/healthz", cell.healthz)
    app.router.add_get("/metrics", cell.metrics)
    app.on_startup.append(cell.start)
    app.on_shutdown.append(cell.draining)
    app.on_cleanup.append(cell.stop)
    return app


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--app", type=Path, required=True)
    ap.add_argument("--service", required=True)
    ap.add_argument("--pod", required=True)
    ap.add_argument("--node", required=True)
    ap.add_argument("--zone", default=os.environ.get("ZONE") or "default", help="μBench's zone label (default: $ZONE)")
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--host", default="0.0.0.0")
    ap.add_argument("--endpoints", type=Path, required=True)
    ap.add_argument("--workers", type=int, default=4, help="threads for internal jobs")
    ap.add_argument("--seed", type=int)
    ap.add_argument("--drain-seconds", type=float, default=10, help="longest wait for in-flight requests on SIGTERM")
    args = ap.parse_args(argv)
    app_spec = load_app(args.app)
    cell = Cell(app_spec, args.service, args.pod, args.node, args.endpoints, args.workers, args.seed, args.zone)
    # SIGTERM/SIGINT: aiohttp stops listening, lets in-flight requests finish, then exits.
    web.run_app(build(cell), host=args.host, port=args.port, print=None, access_log=None,
                shutdown_timeout=args.drain_seconds, handle_signals=True)


if __name__ == "__main__":
    main()
