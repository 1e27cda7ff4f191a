"""The service cell on loopback: μBench semantics, errors, trace headers, metrics, draining."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str, headers: dict | None = None, timeout: float = 10):
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


class Cells:
    def __init__(self, tmp: Path, app: dict):
        self.tmp, self.procs, self.ports = tmp, {}, {}
        self.app_file = tmp / "app.json"
        self.app_file.write_text(json.dumps(app))
        self.endpoints = tmp / "endpoints.json"
        self.endpoints.write_text("{}")

    def start(self, service: str, pod: str | None = None) -> int:
        port = free_port()
        pod = pod or f"{service}-{port}"
        p = subprocess.Popen([sys.executable, "-m", "harness.workload.cell", "--app", str(self.app_file), "--service", service,
                              "--pod", pod, "--node", "n1", "--port", str(port), "--host", "127.0.0.1",
                              "--endpoints", str(self.endpoints), "--seed", "1"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.procs[pod] = p
        deadline = time.monotonic() + 15
        while True:
            try:
                if get(f"http://127.0.0.1:{port}/healthz", timeout=1)[0] == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline and p.poll() is None, "cell did not start"
            time.sleep(0.05)
        self.ports[pod] = port
        return port

    def publish(self, table: dict[str, list[int]]) -> None:
        tmp = self.endpoints.with_suffix(".tmp")
        tmp.write_text(json.dumps({s: [f"127.0.0.1:{p}" for p in ports] for s, ports in table.items()}))
        tmp.replace(self.endpoints)

    def stop(self) -> None:
        for p in self.procs.values():
            if p.poll() is None:
                p.kill()
            p.wait(5)


@pytest.fixture
def cells(tmp_path):
    made = []

    def make(app):
        c = Cells(tmp_path, app)
        made.append(c)
        return c
    yield make
    for c in made:
        c.stop()


def pi(n=10, size=1):
    return {"compute_pi": {"range_complexity": [n, n], "mean_response_size": size}}


def app_of(**services):
    return {"name": "t", "gateway": "a", "services": {
        s: {"internal_service": pi(), "external_services": groups} for s, groups in services.items()}}


def test_calls_downstream_and_passes_trace_headers_on(cells):
    c = cells(app_of(a=[{"seq_len": 1, "services": ["b"]}], b=[]))
    pa, pb = c.start("a"), c.start("b")
    c.publish({"a": [pa], "b": [pb]})
    status, headers, body = get(f"http://127.0.0.1:{pa}/api/v1", {"x-request-id": "r-42", "traceparent": "00-abc-def-01"})
    assert status == 200 and headers["x-request-id"] == "r-42" and headers["traceparent"] == "00-abc-def-01"
    assert float(headers["x-internal-ms"]) > 0 and float(headers["x-external-ms"]) > 0
    assert len(body) >= 1
    metrics = get(f"http://127.0.0.1:{pb}/metrics")[2].decode()
    for name in ("mub_internal_processing_latency_milliseconds", "mub_external_processing_latency_milliseconds",
                 "mub_request_processing_latency_milliseconds", "mub_response_size"):
        # finding 14: μBench's app_name and zone labels beside harness's own
        assert f'{name}_count{{app_name="b",node="n1",pod="b-{pb}",service="b",zone="default"}} 1.0' in metrics, name
    assert "process_cpu_seconds_total" in metrics


def test_failed_downstream_call_answers_500(cells):
    c = cells(app_of(a=[{"seq_len": 1, "services": ["b"]}], b=[]))
    pa = c.start("a")
    c.publish({"a": [pa], "b": [free_port()]})  # nobody listens there
    assert get(f"http://127.0.0.1:{pa}/api/v1")[0] == 500
    c.publish({"a": [pa]})  # no endpoint at all
    assert get(f"http://127.0.0.1:{pa}/api/v1")[0] == 500


def test_groups_run_in_parallel_calls_in_a_group_in_sequence(cells):
    sleeper = {"loader": {"sleep_stress": {"run": True, "sleep_time": 0.2}, "mean_bandwidth": 1}}
    app = {"name": "t", "gateway": "a", "services": {
        "a": {"internal_service": pi(), "external_services": [{"seq_len": 2, "services": ["b", "c"]}, {"seq_len": 1, "services": ["d"]}]},
        "b": {"internal_service": sleeper}, "c": {"internal_service": sleeper}, "d": {"internal_service": sleeper}}}
    c = cells(app)
    ports = {s: c.start(s) for s in "abcd"}
    c.publish({s: [p] for s, p in ports.items()})
    get(f"http://127.0.0.1:{ports['a']}/api/v1")  # warm connections
    t = time.perf_counter()
    status, headers, _ = get(f"http://127.0.0.1:{ports['a']}/api/v1")
    external = float(headers["x-external-ms"])
    assert status == 200
    assert 390 < external < 550, external  # b then c (0.4 s) alongside d (0.2 s)


def test_probability_zero_never_calls_and_seq_len_picks_a_subset(cells):
    app = app_of(a=[{"seq_len": 1, "services": ["b"], "probabilities": {"b": 0.0}},
                    {"seq_len": 1, "services": ["c", "d"]}], b=[], c=[], d=[])
    c = cells(app)
    ports = {s: c.start(s) for s in "abcd"}
    c.publish({s: [p] for s, p in ports.items()})
    for _ in range(20):
        assert get(f"http://127.0.0.1:{ports['a']}/api/v1")[0] == 200

    def count(s):
        m = get(f"http://127.0.0.1:{ports[s]}/metrics")[2].decode()
        line = [x for x in m.splitlines() if x.startswith("mub_request_processing_latency_milliseconds_count")]
        return float(line[0].split()[-1]) if line else 0.0
    assert count("b") == 0
    assert count("c") + count("d") == 20 and count("c") > 0 and count("d") > 0


def test_round_robin_over_replicas(cells):
    c = cells(app_of(a=[{"seq_len": 1, "services": ["b"]}], b=[]))
    pa = c.start("a")
    b1, b2 = c.start("b", "b-one"), c.start("b", "b-two")
    c.publish({"a": [pa], "b": [b1, b2]})
    for _ in range(10):
        get(f"http://127.0.0.1:{pa}/api/v1")
    for port, pod in ((b1, "b-one"), (b2, "b-two")):
        m = get(f"http://127.0.0.1:{port}/metrics")[2].decode()
        assert f'mub_requests_total{{app_name="b",node="n1",pod="{pod}",service="b",status="200",zone="default"}} 5.0' in m


def test_sigterm_drains_in_flight_requests(cells):
    sleeper = {"loader": {"sleep_stress": {"run": True, "sleep_time": 0.5}, "mean_bandwidth": 1}}
    c = cells({"name": "t", "gateway": "a", "services": {"a": {"internal_service": sleeper}}})
    pa = c.start("a", "a-1")
    result = {}
    th = threading.Thread(target=lambda: result.update(r=get(f"http://127.0.0.1:{pa}/api/v1")))
    th.start()
    gauge = 'mub_requests_in_flight{app_name="a",node="n1",pod="a-1",service="a",zone="default"} 1.0'
    deadline = time.monotonic() + 5
    while gauge not in get(f"http://127.0.0.1:{pa}/metrics")[2].decode():  # the request is being served
        assert time.monotonic() < deadline, "the request never arrived"
        time.sleep(0.01)
    c.procs["a-1"].send_signal(signal.SIGTERM)
    th.join(5)
    assert result["r"][0] == 200  # the request in flight finished
    assert c.procs["a-1"].wait(5) == 0


def test_colosseum_answers_mubench_s_fixed_text(cells):
    # finding 8: μBench's generator assigns colosseum by default; the cell runs it
    c = cells({"name": "t", "gateway": "a", "services": {"a": {"internal_service": {"colosseum": {}}}}})
    pa = c.start("a")
    c.publish({"a": [pa]})
    status, _, body = get(f"http://127.0.0.1:{pa}/api/v1")
    assert status == 200 and len(body) == 3070


def internal_ms(port: int, n: int) -> list[float]:
    return [float(get(f"http://127.0.0.1:{port}/api/v1")[1]["x-internal-ms"]) for _ in range(n)]


def test_loader_sleeps_ten_ms_unless_told_not_to(cells):
    # finding 11: μBench's loader merges its defaults, where sleep_stress runs 10 ms
    c = cells({"name": "t", "gateway": "a", "services": {
        "a": {"internal_service": {"loader": {"mean_response_size": 0}}},
        "b": {"internal_service": {"loader": {"mean_response_size": 0, "sleep_stress": {"run": False}}}}}})
    pa, pb = c.start("a"), c.start("b")
    c.publish({"a": [pa], "b": [pb]})
    slept, awake = internal_ms(pa, 5), internal_ms(pb, 5)
    assert min(slept) >= 10.0 and max(awake) < 10.0


def test_cpu_stress_runs_pool_size_times_trials_computations(cells):
    # finding 11: thread_pool_size N × trials T is N·T computations, as μBench's cpu_loader
    def app(pool):
        stress = {"run": True, "range_complexity": [1500, 1500], "thread_pool_size": pool, "trials": 2}
        return {"loader": {"cpu_stress": stress, "sleep_stress": {"run": False}, "mean_response_size": 0}}
    c = cells({"name": "t", "gateway": "a", "services": {"a": {"internal_service": app(1)}, "b": {"internal_service": app(3)}}})
    pa, pb = c.start("a"), c.start("b")
    c.publish({"a": [pa], "b": [pb]})
    one, three = min(internal_ms(pa, 3)), min(internal_ms(pb, 3))
    assert three > 2.0 * one  # three threads under the GIL do three times the work (at least twice the time)
