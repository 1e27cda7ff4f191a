"""SIL-GPO's world made live: what each server's process does for a deployment X, and what the
model expects a live run to measure.

A live server (``harness.families.silgpo.cell``) hosts, for every service m with X[m, n] > 0
instances on it, one queue of X[m, n] servers whose service times are exponential with mean
1/μ_m: one M/M/x queue, as the model has it (eqs. 35-37; instances of one service on one
server share their queue). A request carries the rest of its chain; after its service the
server sends it on to the next service on a server drawn with eq. 52's shares (the reachable
servers hosting it, in proportion to their instances). Sizes over bandwidths (the transmission,
communication and return terms, eqs. 33, 38, 39) are waited out as the model computes them:
nothing this host could send moves 100 MB in a third of a second. So the live run measures
what the model does not have — real processes, HTTP, the testbed's RTTs, the host's timers —
on top of the model's own terms; the RTTs are added to the model's expectation (``expected_s``),
since the paper's delay has none.

The paper's form (seconds) throughout: a live run has one unit, time.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from harness.families.silgpo.world import ServiceGraph, arrivals, delay, routing, seconds_over, visits


def service_name(m: int) -> str:
    return f"s{m}"


def server_plans(g: ServiceGraph, X: np.ndarray) -> list[dict]:
    """Per server n, what its process runs: ``services`` (name -> instances, mean service time s),
    ``routes`` (next service -> [[server, weight, seconds per MB of the hop]]: eq. 52's servers
    reachable from n hosting it, weighted by their instances; 0 s per MB to itself), ``out_mb``
    (each hosted service's output size) and ``return_s_per_mb`` (the return term's, over n's own
    bandwidth)."""
    g = replace(g, compat=False)
    X = np.asarray(X)
    plans = []
    for n in range(g.N):
        hosted = np.flatnonzero(X[:, n] > 0)
        routes = {}
        for m in range(g.S):
            targets = np.flatnonzero(g.adj[n] & (X[m] > 0))
            if len(targets):
                routes[service_name(m)] = [
                    [int(t), int(X[m, t]), 0.0 if t == n else float(seconds_over(1.0, min(g.bw[n], g.bw[t])))] for t in targets]
        plans.append({
            "server": n,
            "services": {service_name(m): {"instances": int(X[m, n]), "mean_s": 1.0 / float(g.mu[m])} for m in hosted},
            "out_mb": {service_name(m): float(g.s_out[m]) for m in hosted},
            "return_s_per_mb": float(seconds_over(1.0, g.bw[n])),
            "routes": routes,
        })
    return plans


def request_types(g: ServiceGraph) -> list[dict]:
    """Per request type r: its rate λ_r, entry server, chain (service names) and the seconds its
    packet takes over the entry server's bandwidth (eq. 33)."""
    g = replace(g, compat=False)
    return [{"type": r, "rate": float(g.rate[r]), "entry": int(g.entry[r]),
             "chain": [service_name(int(m)) for m in g.chains[r]],
             "first_s": float(seconds_over(float(g.size_in[r]), g.bw[g.entry[r]]))} for r in range(len(g.chains))]


def expected_s(g: ServiceGraph, X: np.ndarray, rtt_s: np.ndarray, client_rtt_s: np.ndarray) -> np.ndarray:
    """(R,) the model's mean latency of each request type as a live run measures it: the paper's
    T_r (eq. 40) plus the RTT of every hop a synchronous call makes (the client to the entry
    server, then each hop n -> n' with its probability); ``rtt_s`` (N, N) between servers,
    ``client_rtt_s`` (N,) from the users' node."""
    g = replace(g, compat=False)
    X = np.asarray(X)
    P = routing(g, X)
    Q = visits(g, P)
    net = client_rtt_s[g.entry].astype(float)
    for r, chain in enumerate(g.chains):
        for k in range(1, len(chain)):
            net[r] += float((Q[r, k - 1][:, None] * P[chain[k]] * rtt_s).sum())
    return delay(g, X).per_request + net


def max_utilisation(g: ServiceGraph, X: np.ndarray) -> float:
    """The busiest queue's ρ = λ_{m,n} / (x μ_m) under X."""
    g = replace(g, compat=False)
    X = np.asarray(X)
    lam = arrivals(g, visits(g, routing(g, X)))
    on = X > 0
    return float((lam[on] / (X[on] * g.mu[:, None].repeat(g.N, 1)[on])).max())


def scale_for(g: ServiceGraph, deployments: list[np.ndarray], rho: float) -> float:
    """The factor on every request's rate that makes the busiest queue of any of ``deployments``
    run at ``rho`` (light load: this host's timers and the testbed are judged where a few
    percent of extra service time do not decide the queueing)."""
    return rho / max(max_utilisation(g, X) for X in deployments)


def scaled(g: ServiceGraph, factor: float) -> ServiceGraph:
    """The same instance with every request's rate times ``factor``."""
    return replace(g, rate=g.rate * factor)
