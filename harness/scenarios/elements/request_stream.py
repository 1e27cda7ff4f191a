"""Deployment requests (HephaestusForge's workload): Poisson arrivals of R pods of a service (one of
the stream's, drawn uniformly), all placed by the policy's placer or the request rejected (none
started), each leaving after its exponential lifetime. The same seed gives the same arrivals, lifetimes and R in both worlds."""

from __future__ import annotations

import numpy as np

from harness.testbed.pods import stop_withdrawn, withdraw

SIMULATION_ASSUMES = "a request's pods start at once"


def wanted(sc) -> bool:
    return sc.request_stream is not None


def driver(run):
    rs = run.plan.scenario.request_stream
    rng = np.random.default_rng(run.plan.seed)
    t = rs.start_s + rng.exponential(1 / rs.rate_per_s)
    leaving: list[tuple[float, int, list]] = []  # (when, request, its pods)
    k = 0
    while True:
        now = run.t_run()
        if leaving and leaving[0][0] <= now:
            _, req, pods = leaving.pop(0)
            with run.lock:
                withdraw(run.cluster, pods)
            stop_withdrawn(run.cluster, pods)
            run.event("request-departure", request=req, pods=[p.name for p in pods])
            run.record_placement("request-departure")
            yield 0.0  # at once, but a run that ended stops here (live, events can pile up behind pod starts)
            continue
        if t <= now:
            k += 1
            r = int(rng.integers(rs.replicas[0], rs.replicas[1] + 1))
            lifetime = float(rng.exponential(rs.mean_lifetime_s))
            service = rs.services[int(rng.integers(len(rs.services)))] if len(rs.services) > 1 else rs.services[0]
            with run.lock:
                view, _ = run.view.view()
                nodes = run.placer.place(view, [view.pending(service, f"r{k}#{i}") for i in range(r)])
            if any(n is None for n in nodes):
                run.event("request-rejected", request=k, service=service, replicas=r)
            else:
                pods = run.place_new([service] * r, "request", prefer=nodes)
                run.event("request-arrival", request=k, service=service, replicas=r, nodes=nodes,
                          lifetime_s=round(lifetime, 3))
                run.record_placement("request-arrival")
                leaving.append((now + lifetime, k, pods))
                leaving.sort(key=lambda x: x[0])
            t += rng.exponential(1 / rs.rate_per_s)
            yield 0.0
            continue
        wake = min([t] + [w for w, _, _ in leaving[:1]]) - now
        yield max(0.01, min(wake, 0.5))
