"""Calibrate the simulator to the testbed: measure a few placements live, fit the terms REACH's
model lacks, write a calibrated profile.

What is measured (each placement a normal run directory, steady closed-loop load, placements
taking turns so the host's drift falls on all alike):

- one placement per node type with every service on a node of that type (round-robin over the
  type's nodes): each service's execution time on each type as the app really calls it (the profile's were taken on an idle
  node with the calls cut, at another time: the host's speed drifts by up to 2x);
- one placement that splits the services between the first cloud and the first edge node: calls
  across tiers.

What is fitted, in this order (``fit``):

1. the execution time of each service on each node type: the requests-weighted mean the cells
   measured in their internal job (``results.breakdown``'s execution-on-node rows);
2. ``gateway_overhead_ms``: the client's latency less the entry service's processing time, less
   the model's D_gateway — the client's own overhead and the latency injector's extra time on
   the user's round trip;
3. ``call_overhead_ms``: what is left of each placement's measured end-to-end latency once 1-2
   are in the model, per call on the critical path (how many that is, the model says: its
   latency grows by exactly that many ms when every RTT grows by 1 ms) — HTTP, the thread hop,
   the injector's per-packet cost, and in parallel groups the slowest call's extra over the mean.

The calibrated model adds ``call_overhead_ms`` to every RTT between placement nodes (a call to
the same node included) and ``gateway_overhead_ms`` to the user's RTT: ``sim.topology`` applies
them when the profile carries a ``calibration``; without one REACH's equations are unchanged.

Before the placements, what the simulator draws beside the means is measured on the testbed as
it is now (``pods_and_links``): each link's RTT spread and the pod lifecycle per node type (one
pod of each service on one node of each type, timed: ``testbed.lifecycle``, kept as
``lifecycle.csv`` beside the runs). A backend that cannot measure a spread keeps the source
profile's.
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.errors import UserError
from harness.spec.app import App
from harness.spec.profile import Calibration, PodLifecycle, Profile, Timing

SPLIT = "split"  # the placement that alternates services between a cloud and an edge node


def placements_to_measure(app: App, state) -> dict[str, dict[str, list[str]]]:
    """Name -> placement (one replica per service): every service on one node type, for each
    type (round-robin over the type's nodes, so that services called in parallel do not share one
    node's CPU and the times measured are the services' own, not their contention), and the
    services alternating between the first cloud and the first edge node."""
    hosts = [n for n in state.nodes if n.role != "client"]
    by_type: dict[str, list] = defaultdict(list)
    for n in hosts:
        by_type[n.type].append(n)
    out = {}
    for t, nodes in by_type.items():
        free = {n.name: n.cpus for n in nodes}
        placement = {}
        for k, s in enumerate(app.services):
            need = app.cpu_request(s)
            turn = nodes[k % len(nodes):] + nodes[:k % len(nodes)]  # round-robin: parallel calls do not share a CPU
            node = next((n.name for n in turn if free[n.name] >= need - 1e-9), None)
            if node is None:
                raise UserError(f"the app's services do not fit on the {t} nodes together (one replica each); "
                                "calibrate needs one placement per node type", field="services")
            free[node] -= need
            placement[s] = [node]
        out[f"all-{t}"] = placement
    cloud = next((n.name for n in hosts if n.role == "cloud"), None)
    edge = next((n.name for n in hosts if n.role == "edge"), None)
    if cloud and edge:
        out[SPLIT] = {s: [cloud if i % 2 == 0 else edge] for i, s in enumerate(app.services)}
    return out


def measure(cluster, state, state_dir: Path, app: App, app_file: Path, profile: Profile, profile_file: Path,
            placements: dict[str, dict[str, list[str]]], seconds: float, out: Path, load: dict | None = None,
            rounds: int = 1, warmup_s: float = 5.0, on_tick=None, on_done=None) -> list[dict]:
    """Each placement deployed (``pinned``) and measured under ``load`` (a scenario's load; default
    one closed-loop user) for ``seconds`` after a warm-up, the placements taking turns, ``rounds``
    times (round k: seed k, from 1); one run directory each under ``out``. Every placement must
    give each service the same replica count."""
    import yaml

    from harness.policies.pinned import Pinned, PinnedArgs
    from harness.scenarios.session import Session, run_session
    from harness.spec.scenario import Scenario

    counts = {tuple(len(p.get(s, [])) for s in app.services) for p in placements.values()}
    if len(counts) != 1:
        raise UserError("the placements must give each service the same number of replicas (one app is deployed)")
    replicas = dict(zip(app.services, next(iter(counts))))
    app = app.model_copy(update={"services": {s: spec.model_copy(update={"replicas": replicas[s]})
                                              for s, spec in app.services.items()}})
    sc = Scenario(name=out.name, description=f"{len(placements)} placements of {app.name}, measured one after the other",
                  duration_s=seconds + warmup_s, app=str(app_file), warmup_s=warmup_s,
                  load=load or {"mode": "closed", "steps": [{"at_s": 0, "value": 1}]})
    out.mkdir(parents=True, exist_ok=True)
    sc_file = out / "scenario.yaml"
    sc_file.write_text(yaml.safe_dump(sc.model_dump(mode="json", exclude_defaults=True), sort_keys=False))
    policies = {name: Pinned(PinnedArgs(placement=p)) for name, p in placements.items()}
    session = Session(sc, str(sc_file), app, app_file, profile, profile_file, policies, out)
    return run_session(cluster, state, state_dir, session, rounds, first_seed=1, on_tick=on_tick, on_done=on_done)


LIFECYCLE = "lifecycle.csv"  # per pod timed: its node type, node, service, seconds to ready and to gone


def pods_and_links(cluster, app: App, out: Path) -> tuple[dict[str, PodLifecycle], dict[str, dict[str, float | None]]]:
    """The pod lifecycle per node type (each pod timed written to ``out``/lifecycle.csv) and every
    link's RTT spread (empty where the backend cannot tell), measured now on ``cluster``."""
    from harness.results.csvfile import write_rows
    from harness.testbed import lifecycle

    times = lifecycle.measure(cluster, app, lifecycle.first_of_each_type(cluster))
    if times:
        write_rows(out / LIFECYCLE, [t.row() for t in times])
    return lifecycle.summarize(times), cluster.measure_rtt_spread()


@dataclass
class Fit:
    execution_ms: dict[str, dict[str, Timing]]
    gateway_overhead_ms: float
    call_overhead_ms: float
    residuals: list[dict]  # per run: measured, predicted before and after


def _weighted(pairs: list[tuple[float, float]]) -> float:
    n = sum(w for _, w in pairs)
    return sum(v * w for v, w in pairs) / n


def fit(app: App, profile: Profile, state, runs: list) -> Fit:
    """The calibration from measured runs (``results.collect.Run`` with their breakdown rows)."""
    from harness.sim.topology import model_for

    per_run = [_rows(run, app) for run in runs]
    samples = _execution_samples(per_run, state)
    gateway: list[tuple[float, float]] = []
    measured = []
    for run, rows in zip(runs, per_run):
        gateway += [(r["measured_ms"] - r["predicted_ms"], r["requests"]) for r in rows if r["part"] == "gateway"]
        e2e = [r for r in rows if r["part"] == "end-to-end"]
        measured.append((run, _weighted([(r["measured_ms"], r["requests"]) for r in e2e]),
                         _weighted([(r["predicted_ms"], r["requests"]) for r in e2e]), e2e))
    types = sorted({n.type for n in state.nodes if n.role != "client"})
    missing = [(s, t) for s in app.services for t in types if not samples.get((s, t))]
    if missing:
        s, t = missing[0]
        raise UserError(f"no measured execution time of {s!r} on node type {t!r}: its placement did not run")
    execution = {s: {t: _timing(samples[(s, t)], profile.services.get(s, {}).get(t)) for t in types} for s in app.services}
    c_gw = _weighted(gateway) if gateway else 0.0
    # the model with the measured execution times and the gateway's overhead; what is left is per call
    partial = profile.model_copy(update={"services": execution, "calibration": Calibration(
        method="", gateway_overhead_ms=c_gw, call_overhead_ms=0.0)})
    base = model_for(app, partial, state, rtt="configured")
    shifted = model_for(app, partial.model_copy(update={"calibration": partial.calibration.model_copy(
        update={"call_overhead_ms": 1.0})}), state, rtt="configured")
    per_call = []
    for run, m, _, _ in measured:
        X = base.counts(run.placements[0]["placement"])
        lat, calls = float(base.latency(X)[0]), float(shifted.latency(X)[0] - base.latency(X)[0])
        if calls > 0:
            per_call.append(((m - lat) / calls, calls))
    c_call = _weighted(per_call) if per_call else 0.0
    final = model_for(app, partial.model_copy(update={"calibration": partial.calibration.model_copy(
        update={"call_overhead_ms": c_call})}), state, rtt="configured")
    residuals = [{"run": run.path.parent.name + "/" + run.path.name, "placement": run.policy,
                  "measured_ms": round(m, 2), "before_ms": round(before, 2),
                  "after_ms": round(float(final.latency(final.counts(run.placements[0]["placement"]))[0]), 2)}
                 for run, m, before, _ in measured]
    return Fit(execution, round(c_gw, 3), round(c_call, 3), residuals)


def _rows(run, app: App) -> list[dict]:
    from harness.results.breakdown import breakdown

    rows = breakdown(run, app)
    if not rows:
        raise UserError(f"{run.path}: no per-service breakdown (no metrics pulled, or too few requests)")
    return rows


def _execution_samples(per_run: list[list[dict]], state) -> dict[tuple[str, str], list[tuple[float, float]]]:
    """(service, node type) -> [(mean execution ms the cells measured, requests)], interval by
    interval, from each run's breakdown rows."""
    node_type = {n.name: n.type for n in state.nodes}
    out: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
    for rows in per_run:
        for r in rows:
            if r["part"] == "execution-on-node":
                service, node = r["name"].rsplit("@", 1)
                out[(service, node_type[node])].append((r["measured_ms"], r["requests"]))
    return out


def refreshed(profile: Profile, app: App, state, runs: list) -> Profile:
    """``profile`` with the execution time of every (service, node type) the runs measured replaced
    by what they measured; the rest (and the overheads) kept. The host's speed drifts by up to 2x
    within an hour, so a prediction for a run is fairest with times measured just before it."""
    services = {s: dict(by_type) for s, by_type in profile.services.items()}
    for (s, t), pairs in _execution_samples([_rows(run, app) for run in runs], state).items():
        services[s][t] = _timing(pairs, services[s].get(t))
    return profile.model_copy(update={"services": services})


def _timing(pairs: list[tuple[float, float]], source: Timing | None = None) -> Timing:
    """A measured mean as the profile's Timing. The cells export means per interval, not samples,
    so the spread is the source profile's (``harness profile``'s, per request) scaled to the new
    mean: the same coefficient of variation and quantiles relative to the mean
    (``sim.variability`` draws each simulated request's job times from it); none without a source."""
    mean = _weighted(pairs)
    scale = mean / source.mean_ms if source is not None and source.mean_ms > 0 else None
    return Timing(mean_ms=round(mean, 3), p50_ms=round(source.p50_ms * scale if scale else mean, 3),
                  p95_ms=round(source.p95_ms * scale if scale else mean, 3),
                  std_ms=round(source.std_ms * scale, 3) if scale else 0.0, samples=int(sum(w for _, w in pairs)))


def calibrated_profile(profile: Profile, result: Fit, host_ms: list[float], placements: dict, seconds: float,
                       source: str, lifecycle: dict[str, PodLifecycle] | None = None,
                       rtt_sd_ms: dict[str, dict[str, float | None]] | None = None) -> Profile:
    """The calibrated profile: ``result``'s times and overheads, and the pod ``lifecycle`` and
    links' ``rtt_sd_ms`` measured with them (each, when not measured, the source profile's)."""
    cal = Calibration(
        method=f"harness calibrate: {len(placements)} placements ({', '.join(placements)}), one closed-loop user, "
               f"{seconds:g} s each; execution times as the cells measured them, overheads fitted (harness.scenarios.calibration)",
        created=time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime()),
        source_profile=source, gateway_overhead_ms=result.gateway_overhead_ms,
        call_overhead_ms=result.call_overhead_ms, rtt="configured",
        host_reference_ms=round(float(np.median(host_ms)), 3) if host_ms else None,
        residuals=result.residuals)
    return profile.model_copy(update={"services": result.execution_ms, "calibration": cal,
                                      "lifecycle": lifecycle or profile.lifecycle,
                                      "rtt_sd_ms": rtt_sd_ms or profile.rtt_sd_ms})
