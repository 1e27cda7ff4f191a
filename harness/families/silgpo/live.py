"""SIL-GPO's deployments measured on a testbed: each server of an instance on a node, its
services as ``harness.families.silgpo.cell`` processes, the users' open-loop requests from the
client node (``graph_load``), every request recorded; beside each request type's measured mean,
the model's (``servicegraph_plan.expected_s``, with the testbed's configured RTTs).

Deployments take turns within a repeat, as ``harness run``'s policies do, so the host's drift
falls on all alike. Processes started are stopped whatever ends the run (Ctrl-C included);
what is left of an interrupted clean-up is in the nodes' cgroups, which ``harness teardown``
empties.
"""

from __future__ import annotations

import csv
import json
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from harness.errors import UserError
from harness.families.silgpo import live_plan as plan
from harness.families.silgpo.world import ServiceGraph
from harness.testbed.cluster import Cluster

PORT = 18090  # the servers' port in every node (pods' cells use others)


@dataclass
class Measured:
    deployment: str
    repeat: int
    folder: Path
    per_type: dict[int, tuple[float, int]]  # type -> (mean latency ms, requests)
    expected_ms: np.ndarray  # (R,) the model's
    failed: int

    @property
    def mean_ms(self) -> float:
        """The mean over every request (types weigh by their rates, as the model's total does)."""
        total = sum(ms * n for ms, n in self.per_type.values())
        return total / max(1, sum(n for _, n in self.per_type.values()))

    @property
    def expected_mean_ms(self) -> float:
        counts = np.array([self.per_type.get(r, (0.0, 0))[1] for r in range(len(self.expected_ms))], float)
        return float((self.expected_ms * counts).sum() / max(1.0, counts.sum()))


def servers_on(cluster: Cluster, g: ServiceGraph) -> tuple[list[str], str]:
    """The nodes that stand for the instance's servers (the non-client nodes, in order) and the client node."""
    nodes = [n for n in cluster.nodes if n.role != "client"]
    clients = [n for n in cluster.nodes if n.role == "client"]
    if len(nodes) < g.N or not clients:
        raise UserError(f"the testbed {cluster.state.name!r} has {len(nodes)} server nodes and {len(clients)} client "
                        f"nodes; this instance needs {g.N} and 1 (inventories/silgpo-local.yaml has them)",
                        field="--inventory")
    return [n.name for n in nodes[:g.N]], clients[0].name


def rtts_s(cluster: Cluster, servers: list[str], client: str) -> tuple[np.ndarray, np.ndarray]:
    conf = cluster.rtt_configured()
    between = np.array([[conf[a][b] if a != b else 0.0 for b in servers] for a in servers]) / 1000
    return between, np.array([conf[client][s] for s in servers]) / 1000


def wait_healthy(addresses: list[str], procs, timeout: float = 30) -> None:
    """Until every server at ``addresses`` answers /healthz; RuntimeError if one exits or time runs out."""
    deadline = time.monotonic() + timeout
    for address, proc in zip(addresses, procs):
        while True:
            try:
                with urllib.request.urlopen(f"http://{address}/healthz", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the server at {address} did not start (see its log)")
            time.sleep(0.05)


def measure(cluster: Cluster, g: ServiceGraph, X: np.ndarray, name: str, repeat: int, duration_s: float,
            folder: Path, seed: int) -> Measured:
    """One deployment for ``duration_s`` of load: its servers started, the load played, all stopped."""
    servers, client = servers_on(cluster, g)
    folder.mkdir(parents=True, exist_ok=True)
    addresses = [f"{cluster.node(s).address}:{PORT}" for s in servers]
    procs = []
    try:
        for n, server_plan in enumerate(plan.server_plans(g, X)):
            if not server_plan["services"]:
                continue  # nothing deployed there: no process (a route never leads to it)
            f = folder / f"server-{n}.json"
            f.write_text(json.dumps({**server_plan, "addresses": addresses}))
            procs.append((addresses[n], cluster.start_process(
                servers[n], [sys.executable, "-m", "harness.families.silgpo.cell", "--plan", str(f), "--port", str(PORT),
                             "--seed", str(seed * 1000 + n)], log=folder / f"server-{n}.log")))
        wait_healthy([a for a, _ in procs], [p for _, p in procs])
        types = [{**t, "entry": addresses[t["entry"]]} for t in plan.request_types(g)]
        load = folder / "load.json"
        load.write_text(json.dumps({"duration_s": duration_s, "seed": seed, "timeout_s": 60, "types": types}))
        out = cluster.run_in_node(client, [sys.executable, "-m", "harness.families.silgpo.load", "--load", str(load),
                                           "--out", str(folder / "requests.csv")], timeout=duration_s + 120)
        if out.returncode != 0:
            raise RuntimeError(f"the load generator failed: {out.stderr.strip()[-300:]}")
    finally:
        for _, p in procs:
            p.terminate()
        for _, p in procs:
            try:
                p.wait(10)
            except Exception:  # noqa: BLE001 - one that will not stop is killed
                p.kill()
    rows = list(csv.DictReader(open(folder / "requests.csv")))
    per_type: dict[int, list[float]] = {}
    for r in rows:
        if r["status"] == "200":
            per_type.setdefault(int(r["type"]), []).append(float(r["latency_ms"]))
    between, from_client = rtts_s(cluster, servers, client)
    expected = plan.expected_s(g, X, between, from_client) * 1000
    m = Measured(name, repeat, folder, {t: (float(np.mean(v)), len(v)) for t, v in sorted(per_type.items())},
                 expected, sum(r["status"] != "200" for r in rows))
    (folder / "summary.json").write_text(json.dumps({
        "deployment": name, "repeat": repeat, "mean_ms": m.mean_ms, "expected_mean_ms": m.expected_mean_ms,
        "failed": m.failed, "requests": len(rows),
        "per_type": [{"type": t, "measured_ms": ms, "requests": n, "expected_ms": float(expected[t])}
                     for t, (ms, n) in m.per_type.items()]}, indent=1))
    return m


def run(cluster: Cluster, g: ServiceGraph, deployments: dict[str, np.ndarray], repeats: int, duration_s: float,
        out: Path, seed: int = 0, on_done: Callable[[Measured], None] = lambda m: None) -> list[Measured]:
    """Every deployment in turn within each repeat; repeat k's load is seeded by ``seed + k``."""
    results = []
    for k in range(repeats):
        for name, X in deployments.items():
            m = measure(cluster, g, X, name, k + 1, duration_s, out / f"{name}-r{k + 1}", seed + k)
            results.append(m)
            on_done(m)
    return results
