"""SIL-GPO's deployments played live through the common run (``harness run`` with a scenario of
``world: servicegraph``; ``harness.scenarios.world_run``): each server of an instance on a node,
its services as ``harness.families.silgpo.cell`` processes, the users' open-loop requests from the
client node (``harness.families.silgpo.load``), every request recorded in the run directory; beside
each request type's measured mean, the model's (``live_plan.expected_s``, with the testbed's
configured RTTs).

A scenario file of this world names the instance (``authors`` or ``seed-N``), the setting of Figs
8-10 (``default``, or ``arrival=LOW,HIGH``, ``chain=LOW,HIGH``, ``requests=N``) and the load: the
paper's rates scaled by ``rate_scale``, or so that the busiest queue of any of the session's
deployments runs at ``busiest_rho`` (light load: the host's timers do not decide the queueing).
The deployments are built in the authors' code's form, as every figure of the paper scores them,
and played in the paper's (seconds: a live run has one unit, time).
"""

from __future__ import annotations

import json
import re
import sys
import time
import urllib.request
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from harness.errors import TestbedError, UserError
from harness.families.silgpo import live_plan as plan
from harness.families.silgpo.load import entry_name
from harness.families.silgpo.world import RHO_BOUND, ServiceGraph, delay, paper_units
from harness.loadgen.process import LoadProcess
from harness.spec.names import Name
from harness.testbed.cluster import Cluster

PORT = 18090  # the servers' port in every node (pods' cells use others)
WORLD = "servicegraph"


class ServiceGraphLoad(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    busiest_rho: float | None = Field(None, gt=0, lt=RHO_BOUND, description="scale the rates so the busiest queue "
                                      "of any deployment in the session runs at this utilisation")
    rate_scale: float | None = Field(None, gt=0, le=1, description="the paper's rates times this")
    timeout_s: float = Field(30.0, gt=0, le=300, description="a request unanswered this long after it was due fails")

    @model_validator(mode="after")
    def _one(self):
        if (self.busiest_rho is None) == (self.rate_scale is None):
            raise ValueError("give one of busiest_rho and rate_scale")
        return self


class ServiceGraphScenario(BaseModel):
    """A scenario file of SIL-GPO's world."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    world: Literal["servicegraph"]
    name: Name
    description: str
    duration_s: float = Field(gt=0, le=3600)
    warmup_s: float = Field(5.0, ge=0)
    threshold_ms: float = Field(250.0, gt=0)
    instance: str = Field("authors", description="authors (their generator, seed 3) or seed-N (harness's generator)")
    setting: str = Field("default", description="default, or a setting of Figs 8-10: arrival=LOW,HIGH, "
                         "chain=LOW,HIGH, requests=N (generated instances only)")
    load: ServiceGraphLoad

    @field_validator("instance")
    @classmethod
    def _instance(cls, v: str) -> str:
        if v != "authors" and not re.fullmatch(r"seed-\d+", v):
            raise ValueError(f"expected authors or seed-N, got {v!r}")
        return v

    @model_validator(mode="after")
    def _warmup(self):
        if self.warmup_s >= self.duration_s:
            raise ValueError(f"warmup_s ({self.warmup_s:g}) is not below duration_s ({self.duration_s:g})")
        return self


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


def wait_healthy(addresses: list[str], procs, timeout: float = 30, logs: list[Path] | None = None) -> None:
    """Until every server at ``addresses`` answers /healthz; TestbedError if one exits or time
    runs out, with the end of its log (``logs``, one per server) when there is one."""
    deadline = time.monotonic() + timeout
    for k, (address, proc) in enumerate(zip(addresses, procs)):
        while True:
            try:
                with urllib.request.urlopen(f"http://{address}/healthz", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                log = logs[k] if logs else None
                tail = log.read_text(errors="replace").strip()[-300:] if log and log.exists() else ""
                raise TestbedError(f"the server at {address} did not start"
                                   + (f" ({log}: {tail})" if tail else f" ({log})" if log else ""))
            time.sleep(0.05)


class ServiceGraphPlay:
    """One deployment ``X`` of the instance ``g`` (paper form, rates as the session plays them)
    on the testbed's servers (``harness.scenarios.world_run.Play``)."""

    def __init__(self, g: ServiceGraph, X: np.ndarray, servers: list[str], client: str,
                 rtts: tuple[np.ndarray, np.ndarray], timeout_s: float, rate_scale: float, full: dict,
                 model_file: Path | None = None):
        self.g, self.X, self.servers, self.client, self.rtts = g, np.asarray(X), servers, client, rtts
        self.timeout_s, self.rate_scale, self.full = timeout_s, rate_scale, full
        self.procs: list = []
        self.addresses: list[str] = []
        self.model_file = model_file  # a learner's model (kept in the run's inputs)

    def placement(self) -> dict[str, list[str]]:
        return {plan.service_name(m): [self.servers[n] for n in range(self.g.N) for _ in range(int(self.X[m, n]))]
                for m in range(self.g.S) if self.X[m].sum()}

    @property
    def drain_s(self) -> float:
        """How long after the load's end its last requests may take: each has ``timeout_s``."""
        return self.timeout_s + 10.0

    def deploy(self, cluster: Cluster, folder: Path, seed: int) -> None:
        """A server process per server hosting anything, its draws (service times, routes)
        seeded by the run's ``seed`` and its index."""
        self.addresses = [f"{cluster.node(s).address}:{PORT}" for s in self.servers]
        self.procs, logs = [], []
        for n, server_plan in enumerate(plan.server_plans(self.g, self.X)):
            if not server_plan["services"]:
                continue  # nothing deployed there: no process (a route never leads to it)
            f, log = folder / f"server-{n}.json", folder / f"server-{n}.log"
            f.write_text(json.dumps({**server_plan, "addresses": self.addresses}))
            logs.append(log)
            self.procs.append((self.addresses[n], cluster.start_process(
                self.servers[n], [sys.executable, "-m", "harness.families.silgpo.cell", "--plan", str(f),
                                  "--port", str(PORT), "--seed", str(seed * 1000 + n)], log=log)))
        wait_healthy([a for a, _ in self.procs], [p for _, p in self.procs], logs=logs)

    def load(self, cluster: Cluster, folder: Path, seed: int, duration_s: float) -> LoadProcess:
        types = [{**t, "entry": self.addresses[t["entry"]]} for t in plan.request_types(self.g)]
        spec = folder / "load.json"
        spec.write_text(json.dumps({"duration_s": duration_s, "seed": seed, "timeout_s": self.timeout_s,
                                    "types": types}))
        out, ready = folder / "requests.csv", folder / "loadgen.started"
        return LoadProcess(cluster, self.client, [sys.executable, "-m", "harness.families.silgpo.load", "--load",
                                                  str(spec), "--out", str(out), "--ready", str(ready)],
                           out, folder / "loadgen.log", ready)

    def loads(self) -> list[dict]:
        return [{"mode": "open", "entry": entry_name(t["type"]), "rate": round(t["rate"], 6),
                 "server": self.servers[t["entry"]], "chain": t["chain"]} for t in plan.request_types(self.g)]

    def expected_ms(self) -> np.ndarray:
        """(R,) the model's mean latency of each request type, with the testbed's RTTs."""
        return plan.expected_s(self.g, self.X, *self.rtts) * 1000

    def metrics(self, requests) -> dict:
        """Per request type the measured mean beside the model's, and the model's mean over the
        requests measured (types weigh by their counts, as the measured mean does)."""
        from harness.results.summary import ok_mask

        expected = self.expected_ms()
        ok = requests[ok_mask(requests)]
        per_type, counts = [], np.zeros(len(expected))
        for r in range(len(expected)):
            mine = ok[ok.entry == entry_name(r)].latency_ms.to_numpy(float)
            counts[r] = len(mine)
            per_type.append({"type": r, "requests": len(mine), "expected_ms": round(float(expected[r]), 3),
                             "measured_ms": round(float(mine.mean()), 3) if len(mine) else None})
        return {"expected_ms": round(float((expected * counts).sum() / max(1.0, counts.sum())), 3),
                "per_type": per_type, "rate_scale": round(self.rate_scale, 6),
                "busiest_rho": round(plan.max_utilisation(self.g, self.X), 4), **self.full}

    def stop(self, cluster: Cluster) -> None:
        for _, p in self.procs:
            p.terminate()
        for _, p in self.procs:
            try:
                p.wait(10)
            except Exception:  # noqa: BLE001 - one that will not stop is killed
                p.kill()
        self.procs = []


def plays(scenario: ServiceGraphScenario, names: list[str], model_dir: Path, cluster: Cluster,
          deploy_seed: int = 0) -> dict[str, ServiceGraphPlay]:
    """Each policy's deployment of the scenario's instance, ready to play on ``cluster``
    (``deploy_seed`` seeds the randomised baselines); a name that is no policy of this world, or
    a learner without a model trained on the instance, is one UserError line, before anything
    is deployed."""
    from harness.families.silgpo.baselines import SLOW
    from harness.families.silgpo.commands import LEARNERS, deployment, model_file, policy_names, world
    from harness.policies import parse_ref

    known = policy_names()
    words, models = [], {}
    for name in names:
        ref, args = parse_ref(name)
        word, _, at = ref.partition("@")
        if word not in known or at not in ("", WORLD):
            from harness.policies.catalog import elsewhere

            why = elsewhere(ref, WORLD) or f"no policy is named {ref!r}"
            raise UserError(f"{why}; a servicegraph scenario's policies: {', '.join(known)}", field="--policy")
        if set(args) - {"model"} or (args and word not in LEARNERS):
            raise UserError(f"{name!r}: a servicegraph scenario's policies take no arguments but a learner's "
                            "[model=PATH]", field="--policy")
        words.append(word)
        models[name] = Path(args["model"]) if args else model_file(word, scenario.instance, scenario.setting, model_dir)
    code_form = world(scenario.instance, scenario.setting).build()
    xs = {}
    for name, word in zip(names, words):
        if word in SLOW:
            print(f"{name}: computing its deployment (minutes on the authors' instance) ...", file=sys.stderr, flush=True)
        xs[name] = deployment(word, code_form, scenario.instance, scenario.setting, deploy_seed, models[name])
    g = paper_units(code_form)
    scale = scenario.load.rate_scale or plan.scale_for(g, list(xs.values()), scenario.load.busiest_rho)
    light = plan.scaled(g, scale)
    busiest = max(plan.max_utilisation(light, X) for X in xs.values())
    if busiest >= RHO_BOUND:  # past it the model's sojourn is capped: its expected latencies mean nothing
        raise UserError(f"rate_scale {scale:g} loads a queue to ρ {busiest:.3f}; the model scores queues only "
                        f"below {RHO_BOUND} (lower it, or give busiest_rho)", field="load.rate_scale")
    servers, client = servers_on(cluster, light)
    rtts = rtts_s(cluster, servers, client)
    out = {}
    for name, word in zip(names, words):
        full = {"total_delay": round(delay(code_form, xs[name]).total, 4),
                "total_delay_s": round(delay(g, xs[name]).total, 4)}
        out[name] = ServiceGraphPlay(light, xs[name], servers, client, rtts, scenario.load.timeout_s, scale, full,
                                     models[name] if word in LEARNERS else None)
    return out


