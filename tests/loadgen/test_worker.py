"""The Locust worker, for real, against real cells on loopback: closed loop adds no think time,
open loop keeps its Poisson rate whatever the replies do, SIGTERM flushes the log."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

from harness.loadgen import TIMED_OUT, UNFINISHED
from tests.workload.test_cell import cells  # noqa: F401  (fixture)

SLEEPY = {"name": "t", "gateway": "a", "services": {"a": {"internal_service": {"loader": {
    "sleep_stress": {"run": True, "sleep_time": 0.1}, "mean_response_size": 1}}}}}


@pytest.fixture
def workers():
    started = []
    yield started
    for p in started:  # a failed test must not leave a load generator running
        if p.poll() is None:
            p.kill()
            p.wait(5)


def run_worker(started, tmp_path, endpoints, mode, steps, duration, extra=(), trace=(), timeout_s=5):
    sched = tmp_path / "schedule.json"
    sched.write_text(json.dumps({"mode": mode, "steps": steps, "duration_s": duration, "timeout_s": timeout_s,
                                 "trace": list(trace)}))
    out, ready = tmp_path / "requests.csv", tmp_path / "started"
    p = subprocess.Popen([sys.executable, "-m", "harness.loadgen.worker", "--endpoints", str(endpoints), "--service", "a",
                          "--schedule", str(sched), "--out", str(out), "--ready", str(ready), "--seed", "3", *extra],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    started.append(p)
    return p, out, ready


def test_closed_loop_user_sends_the_next_request_as_soon_as_the_last_returns(cells, workers, tmp_path):
    c = cells(SLEEPY)
    ports = [c.start("a"), c.start("a")]
    c.publish({"a": ports})
    p, out, ready = run_worker(workers, tmp_path, c.endpoints, "closed", [{"at_s": 0, "value": 1}], 4)
    assert p.wait(60) == 0, p.stdout.read().decode()[-2000:]
    assert ready.exists()
    df = pd.read_csv(out, keep_default_na=False)
    assert (df.error == UNFINISHED).sum() <= 1  # the one user's request the end cut short, accounted for
    df = df[df.error != UNFINISHED]
    assert (df.status == 200).all() and len(df) >= 20  # ~100 ms each for ~4 s
    gaps = df.t_send.shift(-1) - (df.t_send + df.latency_ms / 1000)
    assert gaps.dropna().median() < 0.005  # no think time: the generator adds under 5 ms
    assert set(df.pod) == {f"a-{port}" for port in ports}  # round-robin over both replicas


def test_open_loop_keeps_its_rate_when_replies_are_slow(cells, workers, tmp_path):
    c = cells(SLEEPY)
    c.publish({"a": [c.start("a")]})
    rate, duration = 40, 5
    p, out, _ = run_worker(workers, tmp_path, c.endpoints, "open", [{"at_s": 0, "value": rate}], duration)
    assert p.wait(60) == 0, p.stdout.read().decode()[-2000:]
    df = pd.read_csv(out, keep_default_na=False)
    # a closed loop would manage ~10/s against 100 ms replies; Poisson at 40/s gives ~200 in 5 s
    assert 130 <= len(df) <= 270, len(df)
    ends = df.t_send + df.latency_ms / 1000
    in_flight = [((df.t_send <= t) & (ends > t)).sum() for t in df.t_send]
    assert np.max(in_flight) >= 3  # sends did not wait for replies
    assert (df.status == 200).mean() > 0.99


def test_sigterm_stops_the_load_and_keeps_the_log(cells, workers, tmp_path):
    c = cells(SLEEPY)
    c.publish({"a": [c.start("a")]})
    p, out, ready = run_worker(workers, tmp_path, c.endpoints, "closed", [{"at_s": 0, "value": 1}], 60)
    deadline = time.monotonic() + 30
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(2)
    t = time.monotonic()
    p.send_signal(signal.SIGTERM)
    assert p.wait(20) == 0
    assert time.monotonic() - t < 10
    df = pd.read_csv(out, keep_default_na=False)
    assert (df.error == UNFINISHED).sum() <= 1  # the request the signal cut short, accounted for
    assert len(df) >= 5 and (df[df.error != UNFINISHED].status == 200).all()


def test_periodic_sends_one_request_every_interval(cells, workers, tmp_path):
    """μBench Runner's periodic mode: a constant rate, not Poisson; slow replies do not delay sends."""
    c = cells(SLEEPY)
    c.publish({"a": [c.start("a")]})
    p, out, _ = run_worker(workers, tmp_path, c.endpoints, "periodic", [{"at_s": 0, "value": 20}], 3)
    assert p.wait(60) == 0, p.stdout.read().decode()[-2000:]
    df = pd.read_csv(out, keep_default_na=False).sort_values("t_send")
    assert 50 <= len(df) <= 62, len(df)  # 20/s for 3 s
    gaps = df.t_send.diff().dropna()
    assert gaps.median() == pytest.approx(0.05, abs=0.005) and gaps.std() < 0.02  # Poisson's std would be ~0.05
    assert (df.entry == "a").all()


def test_a_mubench_trace_sends_each_event_at_its_time_to_its_service(cells, workers, tmp_path):
    two = {"name": "t", "gateway": "a", "services": {"a": SLEEPY["services"]["a"], "b": SLEEPY["services"]["a"]}}
    two["gateway"] = "a"
    c = cells(two)
    c.publish({"a": [c.start("a")], "b": [c.start("b")]})
    trace = [{"time": 200 + 150 * k, "service": "ab"[k % 2]} for k in range(10)]  # ms, as μBench's Runner files
    p, out, ready = run_worker(workers, tmp_path, c.endpoints, "trace", [{"at_s": 0, "value": 1}], 3, trace=trace)
    assert p.wait(60) == 0, p.stdout.read().decode()[-2000:]
    df = pd.read_csv(out, keep_default_na=False).sort_values("t_send").reset_index(drop=True)
    assert list(df.entry) == [e["service"] for e in trace] and (df.status == 200).all()
    start = float(ready.read_text())
    lateness = df.t_send - start - np.array([e["time"] for e in trace]) / 1000
    assert lateness.abs().max() < 0.05, lateness.tolist()
    assert set(df.pod[df.entry == "b"].str.split("-").str[0]) == {"b"}


def test_an_overloaded_open_loop_accounts_for_every_request_it_sends(cells, workers, tmp_path):
    """Issue 43, probe 1: at an open rate far above what the app serves, requests waited in the
    client's pool past the socket timeout (latencies of 55 s), 90 % of them left no row, and the
    summary read 0 errors. Now every request sent has one row, its latency and timeout count from
    the send, and what was still in flight at the end is an Unfinished row."""
    slow = {"name": "t", "gateway": "a", "services": {"a": {"internal_service": {"loader": {
        "sleep_stress": {"run": True, "sleep_time": 2.0}, "mean_response_size": 1}}}}}
    c = cells(slow)
    c.publish({"a": [c.start("a")]})
    p, out, _ = run_worker(workers, tmp_path, c.endpoints, "open", [{"at_s": 0, "value": 60}], 3, timeout_s=1.0)
    assert p.wait(60) == 0
    said = p.stdout.read().decode()
    df = pd.read_csv(out, keep_default_na=False)
    sent = int(said.split("sent ")[1].split(" requests")[0])
    assert sent == len(df) and 120 <= sent <= 240, said[-500:]  # every request sent, one row each
    assert (df.error == TIMED_OUT).sum() >= 0.9 * len(df)  # 2-s replies, a 1-s timeout
    assert df.latency_ms.max() < 1000 + 300  # from the send: no request waits unseen in the pool


class LoopbackNode:
    """A client node that is this host (the loopback cells): what ``LoadGenerator`` asks of a
    Cluster, without root (no namespace, no cgroup)."""

    def __init__(self, endpoints):
        self.endpoints_file = endpoints

    def start_process(self, node, argv, *, env=None, log=None, cgroup=None):
        from harness.testbed.cluster import PopenProcess

        with open(log, "ab") as out:
            return PopenProcess(node, subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT))


@pytest.mark.parametrize("how", ["ends", "stopped"])
def test_the_load_generators_log_ends_cleanly_whether_the_load_ends_or_is_stopped(cells, tmp_path, how):
    """Issue 65, item 9: every live run's loadgen.log ended in ``ValueError: I/O operation on
    closed file`` (the log's flusher woke after the log was closed). The control path as a live
    run drives it: Locust's CSV and HTML files on, the load run to its end or stopped by SIGTERM."""
    from harness.loadgen.process import LoadGenerator
    from harness.spec.scenario import Load

    c = cells(SLEEPY)
    c.publish({"a": [c.start("a")]})
    log = tmp_path / "loadgen.log"
    gen = LoadGenerator(LoopbackNode(c.endpoints), "client", "a", Load(), 3 if how == "ends" else 60,
                        tmp_path / "requests.csv", 3, log)
    gen.start()
    try:
        if how == "ends":
            assert gen.proc.wait(60) == 0
        else:
            time.sleep(1.5)
            assert gen.stop() == 0
    finally:
        gen.stop(timeout=5)
    text = log.read_text()
    assert "Traceback" not in text and "Error" not in text, text[-2000:]
    assert text.strip().splitlines()[-1].startswith("sent "), text[-2000:]
    assert (tmp_path / "locust_stats.csv").exists() and (tmp_path / "locust_report.html").exists()
