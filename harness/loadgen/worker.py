"""The load generator process: Locust in library mode inside the client node.

    python -m harness.loadgen.worker --endpoints E.json --service GATEWAY --schedule S.json --out requests.csv

Locust monkey-patches the process (gevent) at import, so this runs on its own, never imported
by the harness. The schedule is a list of steps ``{"at_s", "value"}``: users (closed loop:
FastHttpUser with no wait, REACH's best-effort generator) or requests per second (open loop:
Poisson arrivals; periodic: one request every 1/rate s, μBench Runner's periodic mode; each
request in its own greenlet, so a slow reply never delays the next send); or a trace of
``{"time" (ms), "service"}`` events, each sent at its time to its service (μBench Runner's file
mode). Every request sent becomes one CSV row: send time (Unix s), latency ms, status, bytes,
error, the pod that answered, the entry service. Latency and the timeout count from the moment
the generator meant to send, not from when a connection of its pool was free (coordinated
omission, as wrk2 corrects it): a request still waiting when its timeout has passed is a
``Timeout`` row, and one still in flight when the load has ended (and drained for up to its
timeout) an ``Unfinished`` row. At its end the process prints ``sent N requests, M unfinished``. With ``--csv PREFIX`` Locust's
own stats files are written too, as ``locust --csv`` writes them. SIGTERM stops the load and
flushes the logs; a log that cannot be written ends the process with status WRITE_FAILED.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import signal
import sys
import time
from pathlib import Path

import gevent  # noqa: I001  (locust patches on import; gevent first keeps the order explicit)
from locust import LoadTestShape, constant, task
from locust.contrib.fasthttp import FastHttpUser
from locust.env import Environment
from locust.html import get_html_report
from locust.stats import CSV_STATS_INTERVAL_SEC, PERCENTILES_TO_REPORT, StatsCSVFileWriter

from harness.loadgen import NO_ENDPOINT, NO_ENDPOINT_PAUSE_S, TIMED_OUT, UNFINISHED, WRITE_FAILED
from harness.results.rundir import REQUEST_FIELDS
from harness.workload.cell import API_PATH, Endpoints



def value_at(steps: list[dict], t: float) -> float:
    v = steps[0]["value"]
    for s in steps:
        if s["at_s"] <= t:
            v = s["value"]
    return v


class RequestTimedOut(Exception):
    pass


class Accounted(RuntimeError):
    """A request the generator itself ends (timed out, unfinished): its row's error is the message."""


class RequestLog:
    """Appends one row per request sent, as it ends; flushed twice a second and on exit. Each
    request's context carries its id (``rid``): ``in_flight`` holds the requests sent with no row
    yet (their send time, entry and greenlet), so every request sent has exactly one row (Locust
    hands listeners a copy of the context, so the id, not the dict, is what is tracked)."""

    def __init__(self, path: str):
        self.f = open(path, "w", newline="")
        self.w = csv.writer(self.f)
        self.w.writerow(REQUEST_FIELDS)
        self.f.flush()
        self.sent = 0
        self.in_flight: dict[int, tuple[float, str, object]] = {}
        self.closed = False
        self.flusher = None

    def send(self, entry: str) -> dict:
        """A request about to be sent: its context, on the generator's clock."""
        self.sent += 1
        self.in_flight[self.sent] = (time.time(), entry, gevent.getcurrent())
        return {"entry": entry, "rid": self.sent, "sent": self.in_flight[self.sent][0]}

    def on_request(self, start_time, response_time, response_length, exception, response=None, context=None, **_):
        context = context or {}
        rid = context.get("rid")
        if self.closed or (rid is not None and rid not in self.in_flight):
            return  # already accounted for (timed out, or unfinished at the end)
        if rid is not None:  # from the intended send: the time waiting for a connection counts
            sent = self.in_flight.pop(rid)[0]
            start_time, response_time = sent, (time.time() - sent) * 1000
        try:
            self._row(start_time, response_time, response_length, exception, response, context)
        except OSError as exc:
            self.failed(exc)

    def waiting(self) -> bool:
        """Whether a request is still on its way (its greenlet alive: a closed-loop user stopped at
        the end had its request cut, and no reply will come for it)."""
        return any(not g.dead for _, _, g in self.in_flight.values())

    def unfinished(self) -> int:
        """Rows for the requests still in flight; how many."""
        left = list(self.in_flight.items())
        for rid, (sent, entry, _) in left:
            self.on_request(sent, 0.0, 0, Accounted(UNFINISHED), None, {"entry": entry, "rid": rid})
        return len(left)

    def failed(self, exc: OSError) -> None:
        """A row that cannot be written ends the load at once (exit WRITE_FAILED): measuring what
        cannot be kept would be silent data loss."""
        sys.stderr.write(f"cannot write {self.f.name}: {exc.strerror or exc}\n")
        sys.stderr.flush()
        os._exit(WRITE_FAILED)

    def _row(self, start_time, response_time, response_length, exception, response, context) -> None:
        status = getattr(response, "status_code", 0) or 0
        pod = ""
        if response is not None and getattr(response, "headers", None):
            pod = response.headers.get("x-pod", "") or ""
        if not pod:  # no reply to name its pod (a reset, a timeout): the replica it was sent to
            pod = (context or {}).get("target", "")
        error = ("" if exception is None else str(exception) if isinstance(exception, Accounted)
                 else f"{type(exception).__name__}: {exception}"[:200].replace("\n", " "))
        entry = (context or {}).get("entry", "")
        self.w.writerow((f"{start_time:.6f}", f"{response_time:.3f}", status, response_length or 0, error, pod, entry))

    def start_flushing(self) -> None:
        """Flush the log twice a second until ``close``, in a greenlet of its own."""
        self.flusher = gevent.spawn(self._flush_forever)

    def _flush_forever(self):
        while not self.closed:
            gevent.sleep(0.5)
            if self.closed:
                return
            try:
                self.f.flush()
            except OSError as exc:
                self.failed(exc)

    def close(self):
        """Stop the flusher, then flush and close the log. In this order: a flusher woken after
        the file is closed would end every run's log in ``ValueError: I/O operation on closed file``."""
        self.closed = True
        if self.flusher is not None:
            self.flusher.kill(block=True)
        try:
            self.f.flush()
            self.f.close()
        except OSError as exc:
            self.failed(exc)


def make_user(endpoints: Endpoints, service: str, mode: str, steps: list[dict], timeout: float, t0: list[float],
              log: RequestLog, trace: list[dict] | None = None):
    class AppUser(FastHttpUser):
        host = "http://gateway"  # unused: every request names its replica's address
        wait_time = constant(0)
        network_timeout = timeout
        connection_timeout = min(timeout, 3.0)
        concurrency = 64  # open loop: requests in flight at once on this user's pool

        def _fail(self, ctx: dict, exception: Exception) -> None:
            self.environment.events.request.fire(request_type="GET", name=API_PATH, start_time=ctx["sent"],
                                                 response_time=0.0, response_length=0, response=None,
                                                 context=ctx, exception=exception)

        def _one(self, to: str = service):
            ctx = log.send(to)
            target = endpoints.pick(to)
            if target is None:  # no replica published (all lost): a failed request, then a short pause
                self._fail(ctx, RuntimeError(NO_ENDPOINT))
                gevent.sleep(NO_ENDPOINT_PAUSE_S)
                return
            ctx["target"] = target
            try:  # the timeout runs from the send, whatever the pool's queue holds it for
                with gevent.Timeout(timeout, RequestTimedOut):
                    with self.client.get(f"http://{target}{API_PATH}", name=API_PATH, catch_response=True,
                                         context=ctx) as r:
                        if r.status_code != 200:
                            r.failure(f"HTTP {r.status_code}")
            except RequestTimedOut:
                self._fail(ctx, Accounted(TIMED_OUT))

        @task
        def request(self):
            if mode == "closed":
                self._one()
                return
            if mode == "trace":  # each event at its time, to its service
                for e in trace:
                    gevent.sleep(max(0.0, e["time"] / 1000 - (time.monotonic() - t0[0])))
                    gevent.spawn(self._one, e["service"])
                while True:
                    gevent.sleep(3600)
            # open loop: Poisson arrivals (or one every 1/rate s) at the scheduled rate, each in its own
            # greenlet; send times are kept on an absolute clock, so the time a send takes does not add up
            due = time.monotonic()
            while True:
                rate = value_at(steps, time.monotonic() - t0[0])
                if rate <= 0:
                    gevent.sleep(0.1)
                    due = time.monotonic()
                    continue
                due += random.expovariate(rate) if mode == "open" else 1 / rate
                gevent.sleep(max(0.0, due - time.monotonic()))
                gevent.spawn(self._one)

    return AppUser


def make_shape(mode: str, steps: list[dict], duration: float):
    class Schedule(LoadTestShape):
        def tick(self):
            t = self.get_run_time()
            if t >= duration:
                return None
            users = int(value_at(steps, t)) if mode == "closed" else 1
            return users, 100.0

    return Schedule()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--endpoints", required=True, help="the endpoints file the cells read")
    ap.add_argument("--service", required=True, help="the gateway service")
    ap.add_argument("--schedule", required=True, help='JSON: {"mode", "steps", "duration_s", "timeout_s"}')
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--ready", help="file to write the load's start time (Unix s) into, once Locust is set up")
    ap.add_argument("--csv", dest="csv_prefix", help="Locust's own CSV files: PREFIX_stats.csv, PREFIX_stats_history.csv, "
                    "PREFIX_failures.csv, PREFIX_exceptions.csv (as locust --csv PREFIX)")
    ap.add_argument("--html", help="Locust's own HTML report, written at the end (as locust --html FILE)")
    args = ap.parse_args(argv)
    spec = json.loads(open(args.schedule).read())
    random.seed(args.seed)
    t0 = [time.monotonic()]
    log = RequestLog(args.out)
    endpoints = Endpoints(Path(args.endpoints))
    timeout = spec.get("timeout_s", 10.0)
    user = make_user(endpoints, args.service, spec["mode"], spec["steps"], timeout, t0, log,
                     sorted(spec.get("trace", []), key=lambda e: e["time"]))
    env = Environment(user_classes=[user], shape_class=make_shape(spec["mode"], spec["steps"], spec["duration_s"]))
    env.events.request.add_listener(log.on_request)
    runner = env.create_local_runner()
    log.start_flushing()
    stats_csv = stats_writer = None
    if args.csv_prefix:  # what `locust --csv` writes, so Locust users' tools read the run as they are
        stats_csv = StatsCSVFileWriter(env, PERCENTILES_TO_REPORT, args.csv_prefix)
        stats_writer = gevent.spawn(stats_csv.stats_writer)
    told: list[bool] = []  # stopped by a signal: drain briefly, not for a whole timeout

    def stop_now():
        told.append(True)
        runner.quit()
    gevent.signal_handler(signal.SIGTERM, stop_now)
    gevent.signal_handler(signal.SIGINT, stop_now)
    t0[0] = time.monotonic()
    if args.ready:
        Path(args.ready).write_text(f"{time.time():.6f}\n")
    runner.start_shape()

    def quit_at_the_end():
        # not gevent.spawn_later: its timer starts from the loop's cached clock, which the set-up above
        # left stale, and fired ~0.8 s early (the load's last second was never sent)
        while (left := spec["duration_s"] - (time.monotonic() - t0[0])) > 0:
            gevent.sleep(min(left, 0.2))
        runner.quit()
    # the shape stops the users at the end; quitting ends the runner (and this process)
    gevent.spawn(quit_at_the_end)
    runner.greenlet.join()
    drain_until = time.monotonic() + (1.0 if told else timeout)  # requests sent before the end may still answer
    while log.waiting() and time.monotonic() < drain_until:
        gevent.sleep(0.05)
    unfinished = log.unfinished()
    log.close()
    print(f"sent {log.sent} requests, {unfinished} unfinished", flush=True)
    if stats_csv is not None:
        gevent.sleep(CSV_STATS_INTERVAL_SEC + 0.1)  # one more pass of the writer: the files hold the final totals
        stats_writer.kill(block=True)  # stopped before its files are closed, as `locust` does
        try:
            stats_csv.close_files()
        except OSError as exc:
            log.failed(exc)
    if args.html:
        try:
            Path(args.html).write_text(get_html_report(env, show_download_link=False), encoding="utf-8")
        except OSError as exc:
            log.failed(exc)
    sys.exit(0)


if __name__ == "__main__":
    main()
