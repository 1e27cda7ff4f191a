"""Deployment requests (HephaestusForge's workload): Poisson arrivals of R pods of a service (one of
the stream's, drawn uniformly), all placed by the policy's placer or the request rejected (none
started), each leaving after its exponential lifetime. The same seed gives the same arrivals, lifetimes and R in both worlds.

Live, a request's pods start while the stream goes on (``StartPlaced``): the decision is made at
the arrival, the room held at once, the pods published when ready. Waiting for them instead put
later arrivals up to 35 s behind their time (2026-11-27, the admission scenario), so a run saw
fewer requests than the same seed draws in simulation. Each arrival's event carries the time it
was due (``due_s``). A simulated run with the profile's pod lifecycle does the same on its clock
(``simrun.SimStarting``); without one, the pods start at once."""

from __future__ import annotations

import numpy as np

from harness.rescheduler.loop import PlanTimeout
from harness.testbed.pods import stop_withdrawn, withdraw

SIMULATION_ASSUMES = "a request's pods start at once"
SIMULATION_ASSUMES_LIFECYCLE = ("a request's pods serve after their start time (the profile's pod lifecycle), the "
                                "stream going on meanwhile, as live")
JOIN_S = 60.0  # a departure waits at most this long for its request's pods to have started


def wanted(sc) -> bool:
    return sc.request_stream is not None


def depart(run, req: int, pods) -> None:
    """Request ``req`` leaves: its pods (once started, if they were still starting) withdrawn, then stopped."""
    if hasattr(pods, "join"):  # still starting (StartPlaced, SimStarting)
        pods = pods.join(JOIN_S)
    with run.lock:
        withdraw(run.cluster, pods)
    stop_withdrawn(run.cluster, pods)
    run.event("request-departure", request=req, pods=[p.name for p in pods])
    run.record_placement("request-departure")


def driver(run):
    rs = run.plan.scenario.request_stream
    rng = np.random.default_rng(run.plan.seed)
    t = rs.start_s + rng.exponential(1 / rs.rate_per_s)
    leaving: list[tuple[float, int, object]] = []  # (when, request, its pods or their start: run.start_placed)
    k = 0
    try:
        while True:
            now = run.t_run()
            if leaving and leaving[0][0] <= now:
                _, req, pods = leaving.pop(0)
                # beside the stream (live): a request whose pods are still starting is waited for
                # there, and the draining too, so the next arrival never waits behind a departure
                run.spawn(lambda req=req, pods=pods: depart(run, req, pods), "request-departure")
                yield 0.0  # at once, but a run that ended stops here
                continue
            if t <= now:
                k += 1
                r = int(rng.integers(rs.replicas[0], rs.replicas[1] + 1))
                lifetime = float(rng.exponential(rs.mean_lifetime_s))
                service = rs.services[int(rng.integers(len(rs.services)))] if len(rs.services) > 1 else rs.services[0]
                started = None
                with run.lock:
                    view, _ = run.view.view()
                    asked = [view.pending(service, f"r{k}#{i}") for i in range(r)]
                    try:
                        nodes = run.place_budget(lambda: run.placer.place(view, asked))
                    except PlanTimeout as exc:  # the request is rejected, the timeout counted
                        run.event("plan-timeout", reason=f"place(): {exc}")
                        nodes = [None] * r
                    if all(n is not None for n in nodes):
                        started = run.start_placed([service] * r, nodes,
                                                   on_ready=lambda: run.record_placement("request-arrival"))
                if any(n is None for n in nodes):
                    run.event("request-rejected", request=k, service=service, replicas=r)
                else:
                    at_once = started is None  # simulated without pod lifecycle: the pods start at once
                    if at_once:
                        started = run.place_new([service] * r, "request", prefer=nodes)
                    run.event("request-arrival", request=k, service=service, replicas=r, nodes=nodes,
                              lifetime_s=round(lifetime, 3), due_s=round(t, 3))
                    if at_once:
                        run.record_placement("request-arrival")
                    leaving.append((now + lifetime, k, started))
                    leaving.sort(key=lambda x: x[0])
                t += rng.exponential(1 / rs.rate_per_s)
                yield 0.0
                continue
            wake = min([t] + [w for w, _, _ in leaving[:1]]) - now
            yield max(0.01, min(wake, 0.5))
    finally:  # the run ended: the pods still starting get ready (or fail) before clean-up
        for _, _, pods in leaving:
            if hasattr(pods, "join"):
                pods.join(JOIN_S)
