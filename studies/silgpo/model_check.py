"""The service-graph world's queueing model (``harness.families.silgpo.world``, eqs. 31-37) against a
discrete-event simulation of the same network (Ciw: FCFS M/M/c nodes, one customer class per
request type, each following its chain with the routing eq. 52 gives).

    .venv/bin/python -m studies.silgpo.model_check [--instances 3] [--loads 0.5,0.8] [--time 400]

Per generated instance (the paper's default setting, seeds 0, 1, 2) and per load: the code's
greedy deployment (each instance on its service's preferred server), every request rate scaled
so that the busiest queue runs at ρ = load; then each request type's mean sojourn (queueing and
service along its chain) from the model, and from the simulation (customers arriving after a
warm-up of a tenth of the run and finished by its end), and the mean over request types of the
model's relative error. The bar: within 5 % at every ρ ≤ 0.8.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace

import numpy as np

from harness.families.silgpo.baselines import DEPLOYERS
from harness.families.silgpo.world import ServiceGraph, ServiceGraphConfig, arrivals, generate, routing, sojourn, visits

BAR = 0.05


def preferred_deployment(g: ServiceGraph) -> np.ndarray:
    """The code's greedy: each instance on its service's preferred server (families.silgpo.baselines)."""
    return DEPLOYERS["preferred"](g, None)


def spread_deployment(g: ServiceGraph) -> np.ndarray:
    """Each instance on the server, among those it fits, with the fewest instances of its service
    (ties: the preferred server, then the lowest index): every service split over servers, so
    that eq. 52's routing is exercised."""
    X = g.initial()
    for m in g.to_place():
        fits = np.flatnonzero(g.fits(X, m))
        X[m, min(fits, key=lambda n: (X[m, n], n != g.preferred[m], n))] += 1
    return X


DEPLOYMENTS = {"preferred": preferred_deployment, "spread": spread_deployment}


def at_load(g: ServiceGraph, X: np.ndarray, rho: float) -> ServiceGraph:
    """``g`` with every request's rate scaled so that X's busiest queue runs at ρ."""
    lam = arrivals(g, visits(g, routing(g, X)))
    busiest = (lam / (np.maximum(X, 1) * g.mu[:, None])).max()
    return replace(g, rate=g.rate * rho / busiest)


def model_sojourn(g: ServiceGraph, X: np.ndarray) -> np.ndarray:
    """(R,) each request type's mean time in queues and service along its chain."""
    Q = visits(g, routing(g, X))
    W, unstable = sojourn(g, arrivals(g, Q), X)
    assert unstable == 0
    on = g.padded >= 0
    return np.where(on, (Q * W[np.where(on, g.padded, 0)]).sum(axis=2), 0.0).sum(axis=1)


def simulated_sojourn(g: ServiceGraph, X: np.ndarray, horizon: float, seed: int) -> tuple[np.ndarray, int]:
    """(R,) each request type's mean sojourn in a Ciw simulation, and the customers counted."""
    import ciw

    nodes = [(m, n) for m, n in zip(*np.nonzero(X))]
    index = {mn: i for i, mn in enumerate(nodes)}
    P = routing(g, X)
    classes = {}
    for r, chain in enumerate(g.chains):
        arrive = [None] * len(nodes)
        arrive[index[(chain[0], g.entry[r])]] = ciw.dists.Exponential(rate=float(g.rate[r]))
        route = np.zeros((len(nodes), len(nodes)))
        for a, b in zip(chain[:-1], chain[1:]):
            for n in np.flatnonzero(X[a]):
                for n2 in np.flatnonzero(P[b, n]):
                    route[index[(a, n)], index[(b, n2)]] = P[b, n, n2]
        classes[f"r{r}"] = (arrive, route.tolist())
    network = ciw.create_network(
        arrival_distributions={k: v[0] for k, v in classes.items()},
        service_distributions={k: [ciw.dists.Exponential(rate=float(g.mu[m])) for m, _ in nodes] for k in classes},
        routing={k: v[1] for k, v in classes.items()},
        number_of_servers=[int(X[m, n]) for m, n in nodes])
    ciw.seed(seed)
    sim = ciw.Simulation(network)
    sim.simulate_until_max_time(horizon)
    per_customer: dict[int, list] = {}
    for rec in sim.get_all_records():
        per_customer.setdefault(rec.id_number, []).append(rec)
    total, count = np.zeros(len(g.chains)), np.zeros(len(g.chains))
    for recs in per_customer.values():
        r = int(recs[0].customer_class[1:])
        start = min(x.arrival_date for x in recs)
        if start < horizon / 10 or len(recs) != g.lengths[r]:  # warming up, or not finished
            continue
        total[r] += sum(x.waiting_time + x.service_time for x in recs)
        count[r] += 1
    return total / np.maximum(count, 1), int(count.sum())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--instances", type=int, default=3)
    ap.add_argument("--loads", default="0.5,0.8", help="the busiest queue's ρ, comma-separated")
    ap.add_argument("--time", type=float, default=400.0, help="simulated time units per run")
    ap.add_argument("--deployments", default="preferred,spread", help=f"of {', '.join(DEPLOYMENTS)}")
    args = ap.parse_args()
    ok_all, t0 = True, time.monotonic()
    print(f"{'instance':>8s} {'deployment':>10s} {'ρ max':>6s} {'customers':>9s} {'model s':>8s} {'simulated s':>11s} "
          f"{'mean |err|':>10s} {'worst':>7s}  bar {BAR:.0%}")
    for seed in range(args.instances):
        g0 = generate(ServiceGraphConfig(), seed)
        for kind in args.deployments.split(","):
            X = DEPLOYMENTS[kind](g0)
            for rho in (float(x) for x in args.loads.split(",")):
                g = at_load(g0, X, rho)
                model = model_sojourn(g, X)
                sim, n = simulated_sojourn(g, X, args.time, seed)
                err = np.abs(model / sim - 1)
                ok = err.mean() <= BAR
                ok_all &= ok
                print(f"{seed:8d} {kind:>10s} {rho:6.2f} {n:9d} {model.mean():8.4f} {sim.mean():11.4f} "
                      f"{err.mean():10.2%} {err.max():7.2%}  {'PASS' if ok else 'FAIL'}", flush=True)
    print(f"{args.instances} instances × {args.deployments} × ρ {args.loads}, {args.time:g} time units each; "
          f"{time.monotonic() - t0:.0f} s")
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
