"""SIL-GPO's servers on loopback: one FIFO queue per service and server, eq. 52's shares between
the servers hosting the next service, every term of the model waited out once."""

from __future__ import annotations

import asyncio
import csv
import json
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

from harness.families.silgpo.live import wait_healthy
from harness.families.silgpo import live_plan as plan
from harness.families.silgpo.world import ServiceGraph
from harness.families.silgpo.cell import FifoServers
from tests.workload.test_cell import free_port, get


def test_the_instances_of_a_service_share_one_first_come_first_served_queue():
    async def scenario():
        q, order = FifoServers(2), []

        async def customer(i):
            await q.acquire()
            order.append(i)
            await asyncio.sleep(0.01)
            q.release()

        tasks = [asyncio.create_task(customer(i)) for i in range(8)]
        await asyncio.sleep(0)  # the first two hold both servers, six wait
        assert q.free == 0 and len(q.waiting) == 6
        tasks[4].cancel()  # one gives up while waiting: its turn passes to the next
        await asyncio.gather(*tasks, return_exceptions=True)
        return order, q.free

    order, free = asyncio.run(scenario())
    assert order == [0, 1, 2, 3, 5, 6, 7] and free == 2


def tiny() -> tuple[ServiceGraph, np.ndarray]:
    """Three servers, three services; one request type s0 -> s1 -> s2 entering at server 0, s1 on
    servers 1 (two instances) and 2 (one): eq. 52 sends two thirds of the hop to server 1."""
    g = ServiceGraph(cpu=np.full(3, 8.0), gpu=np.zeros(3), mem=np.full(3, 100.0), bw=np.array([4.0, 2.0, 8.0]),
                     adj=np.ones((3, 3), bool), s_cpu=np.ones(3), s_gpu=np.zeros(3), s_mem=np.ones(3),
                     s_out=np.array([40.0, 20.0, 10.0]), mu=np.array([24.0, 20.0, 40.0]), ai=np.zeros(3, bool),
                     chains=[np.array([0, 1, 2])], rate=np.array([12.0]), size_in=np.array([20.0]))
    g.preferred = np.array([0, 1, 2])
    X = np.array([[1, 0, 0], [0, 2, 1], [0, 0, 1]])
    return g, X


def test_a_chain_follows_eq_52_and_takes_the_models_time(tmp_path):
    g, X = tiny()
    ports = [free_port() for _ in range(g.N)]
    addresses = [f"127.0.0.1:{p}" for p in ports]
    procs = []
    try:
        for n, server in enumerate(plan.server_plans(g, X)):
            f = tmp_path / f"plan{n}.json"
            f.write_text(json.dumps({**server, "addresses": addresses}))
            procs.append(subprocess.Popen([sys.executable, "-m", "harness.families.silgpo.cell", "--plan", str(f),
                                           "--host", "127.0.0.1", "--port", str(ports[n]), "--seed", str(n)],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_healthy(addresses, procs, timeout=20)
        types = [{**t, "entry": addresses[t["entry"]]} for t in plan.request_types(g)]
        load = tmp_path / "load.json"
        load.write_text(json.dumps({"duration_s": 12, "seed": 1, "timeout_s": 20, "types": types}))
        out = tmp_path / "requests.csv"
        subprocess.run([sys.executable, "-m", "harness.families.silgpo.load", "--load", str(load), "--out", str(out)],
                       check=True, timeout=90, capture_output=True)
        rows = list(csv.DictReader(open(out)))
        status, _, metrics = get(f"http://{addresses[1]}/metrics")
        assert status == 200 and b'graph_sojourn_seconds_count{server="1",service="s1"}' in metrics
    finally:
        for p in procs:
            p.terminate()
            p.wait(10)
    assert len(rows) > 40 and all(r["status"] == "200" for r in rows)
    paths = [r["servers"] for r in rows]
    assert set(paths) <= {"0 1 2", "0 2 2"}  # s0 where the request enters; s2 only on server 2
    share = sum(p == "0 1 2" for p in paths) / len(paths)
    assert share == pytest.approx(2 / 3, abs=4 * np.sqrt(2 / 9 / len(paths)))
    # the model (RTT 0 on loopback): queues, the packet, two hops' outputs and the return, once each
    expected = plan.expected_s(g, X, np.zeros((3, 3)), np.zeros(3))[0] * 1000
    latency = np.array([float(r["latency_ms"]) for r in rows])
    assert expected > 300  # the sizes' terms weigh: the check would see one left out or doubled
    print(f"measured {latency.mean():.1f} ms over {len(latency)} requests, model {expected:.1f} ms")
    assert latency.mean() == pytest.approx(expected, rel=0.15), (latency.mean(), expected)


def test_a_deployment_scaled_to_light_load_keeps_its_shape():
    g, X = tiny()
    light = plan.scaled(g, plan.scale_for(g, [X], 0.5))
    assert plan.max_utilisation(light, X) == pytest.approx(0.5)
    assert np.allclose(light.rate / g.rate, light.rate[0] / g.rate[0])
    assert replace(light, rate=g.rate).rate[0] == g.rate[0]


def test_the_users_stopped_by_sigterm_write_every_request_in_flight_as_unfinished(tmp_path):
    import signal
    import socket
    import time

    from harness.loadgen import UNFINISHED
    from harness.results.rundir import REQUEST_FIELDS

    silent = socket.socket()  # accepts connections, never answers: every request stays in flight
    silent.bind(("127.0.0.1", 0))
    silent.listen(512)
    load = tmp_path / "load.json"
    load.write_text(json.dumps({"duration_s": 20, "seed": 1, "timeout_s": 60, "types": [
        {"type": 0, "rate": 20.0, "entry": f"127.0.0.1:{silent.getsockname()[1]}", "chain": ["s0"], "first_s": 0.0}]}))
    out, ready = tmp_path / "requests.csv", tmp_path / "started"
    proc = subprocess.Popen([sys.executable, "-m", "harness.families.silgpo.load", "--load", str(load), "--out", str(out),
                             "--ready", str(ready)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while not (ready.exists() and ready.read_text().endswith("\n")) and time.monotonic() < deadline:
            time.sleep(0.05)
        t0 = float(ready.read_text())
        time.sleep(max(0.0, t0 + 1.5 - time.time()))
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0, proc.stderr.read()
    finally:
        proc.kill()
        silent.close()
    rows = list(csv.DictReader(open(out)))
    assert tuple(rows[0])[:len(REQUEST_FIELDS)] == REQUEST_FIELDS
    assert 10 <= len(rows) <= 60  # about 1.5 s of 20/s, then no more arrivals
    assert all(r["error"] == UNFINISHED and r["status"] == "0" and r["entry"] == "type-0" for r in rows)
    assert all(t0 <= float(r["t_send"]) <= t0 + 2.5 for r in rows)
