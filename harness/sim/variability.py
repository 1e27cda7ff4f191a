"""Per-request variability: each request's execution times drawn around the profile's means, so
that a simulated run has a latency distribution (a p95 above the mean, seeds that differ) and not
one number per placement.

A job of service s on node n takes E[s, n] × F ms, F drawn from a gamma distribution with mean 1
and the coefficient of variation the profile measured for that service on that node's type
(``Timing.std_ms / mean_ms``; 0 where it measured none, as a calibrated profile that kept no
spread: then F = 1 and the run is as before). A closed loop's request takes REACH's model
(eqs. 2-9) with its own draw of every job time around the job times the queueing model gives
the users running (``RequestSpread.latencies``; one user: the profile's); an open loop's replay
(``sim.trace_replay``) draws each job's time itself. The draws' mean is the model's where it is
linear in the job times; where a caller waits for the slower of parallel calls, the mean of the
slowest is above the slowest of the means, as live.

A request also takes its own route (``route_draws``): where a service has replicas on several
nodes, each request runs on one of them, drawn in proportion to the replicas there (as a proxy
picking an endpoint at random), not on the placement's mean over them. Live, requests entering at
a slow front end's replica are slow all the way; the mean over replicas is a narrower spread than
users see. One replica per service and request: a service called twice in a request is served by
the same replica both times (a simplification; the replay routes each call).

The network the same way (``link_sd``): where the profile measured each link's RTT spread
(``Profile.rtt_sd_ms``, the standard deviation of its pings), a request's round trip on a link
is drawn from a gamma distribution with the model's RTT as its mean and that standard deviation
(one draw per link and request in a closed loop, one per call in the replay), from a stream of
its own, so that the job times drawn for a seed are the same with or without jitter. A profile
without ``rtt_sd_ms`` draws no delay: the network is the model's, as before.
"""

from __future__ import annotations

import numpy as np

from harness.sim.latency import LatencyModel
from harness.spec.profile import Profile


def cv_matrix(model: LatencyModel, profile: Profile | None) -> np.ndarray:
    """(S, N) the coefficient of variation of each service's execution time on each node (its
    type's, in the profile); zeros without a profile."""
    cv = np.zeros((model.S, len(model.topo.nodes)))
    if profile is None:
        return cv
    for i, s in enumerate(model.services):
        by_type = profile.services.get(s, {})
        for n, t in enumerate(model.topo.node_types):
            timing = by_type.get(t)
            if timing is not None and timing.mean_ms > 0:
                cv[i, n] = timing.std_ms / timing.mean_ms
    return cv


def link_sd(model: LatencyModel, profile: Profile | None) -> tuple[np.ndarray, np.ndarray]:
    """(N, N) the standard deviation of the RTT between each two of the model's nodes, and (N,) of
    the user's to each node (the mean over the profile's client nodes), in ms; zeros where the
    profile measured none. A pair the profile did not measure by name (the same node types in
    another inventory) gets the mean of its measured links between the same two node types."""
    nodes = model.topo.nodes
    sd, user = np.zeros((len(nodes), len(nodes))), np.zeros(len(nodes))
    if profile is None or not profile.rtt_sd_ms:
        return sd, user
    type_of = dict(profile.nodes)
    by_types: dict[tuple[str, str], list[float]] = {}
    for a, row in profile.rtt_sd_ms.items():
        for b, v in row.items():
            if v is not None and a != b and a in type_of and b in type_of:
                by_types.setdefault((type_of[a], type_of[b]), []).append(float(v))
                by_types.setdefault((type_of[b], type_of[a]), []).append(float(v))

    def of(a: str, ta: str, b: str, tb: str) -> float:
        if a == b:
            return 0.0
        v = profile.rtt_sd_ms.get(a, {}).get(b)
        if v is None:
            v = profile.rtt_sd_ms.get(b, {}).get(a)
        if v is None:
            got = by_types.get((ta, tb))
            v = float(np.mean(got)) if got else 0.0
        return float(v)
    types = model.topo.node_types
    for i, (a, ta) in enumerate(zip(nodes, types)):
        for j, (b, tb) in enumerate(zip(nodes, types)):
            sd[i, j] = of(a, ta, b, tb)
    role = {t: facts.get("role", facts.get("tier")) for t, facts in profile.node_types.items()}
    clients = [c for c, t in type_of.items() if role.get(t) == "client"]
    if clients:
        user[:] = [np.mean([of(c, type_of[c], b, tb) for c in clients]) for b, tb in zip(nodes, types)]
    return sd, user


def link_draws(rng: np.random.Generator, model: LatencyModel, sd: tuple[np.ndarray, np.ndarray],
               n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` requests' own RTTs: (n, N, N) between nodes and (n, N) from the user, each gamma with
    the model's RTT as its mean and ``sd``'s standard deviation (a link of RTT 0, a call within
    a node, is not drawn)."""
    def draw(mean: np.ndarray, spread: np.ndarray) -> np.ndarray:
        cv = np.where(mean > 0, spread / np.where(mean > 0, mean, 1.0), 0.0)
        return mean[None] * job_factors(rng, cv, (n,))
    return draw(model.D, sd[0]), draw(model.user_rtt, sd[1])


def job_factors(rng: np.random.Generator, cv: np.ndarray, size: tuple[int, ...] = ()) -> np.ndarray:
    """Multipliers of mean 1 and coefficient of variation ``cv`` (gamma), shape ``size + cv.shape``;
    exactly 1 where cv is 0."""
    cv = np.asarray(cv, float)
    shape = np.where(cv > 0, 1.0 / np.maximum(cv, 1e-9) ** 2, 1.0)
    draws = rng.gamma(np.broadcast_to(shape, size + cv.shape), 1.0 / shape)
    return np.where(cv > 0, draws, 1.0)


def route_draws(rng: np.random.Generator, X: np.ndarray, n: int) -> np.ndarray:
    """``n`` requests' routes through placement ``X`` (S, N): (n, S, N), each service's row one
    replica, on a node drawn with probability X[s, node] / X[s].sum()."""
    X = np.asarray(X, float)
    cum = np.cumsum(X / X.sum(axis=1, keepdims=True), axis=1)
    cum[:, -1] = 1.0  # no draw falls past the last node for rounding
    picks = (rng.random((n, X.shape[0]))[..., None] >= cum[None]).sum(axis=2)
    out = np.zeros((n, *X.shape))
    np.put_along_axis(out, picks[..., None], 1.0, axis=2)
    return out


def spread_over_nodes(X: np.ndarray) -> bool:
    """Whether some service of placement ``X`` has replicas on more than one node (else every
    request takes the same route)."""
    return bool(((np.asarray(X) > 0).sum(axis=1) > 1).any())


class RequestSpread:
    """Each request's own latency: its own job times (drawn from ``rng``), its own route where
    ``routes`` (from ``route_rng``), and its own RTTs where ``links`` (``link_sd``) measured a
    spread (from ``link_rng``). Each from a stream of its own, so that the job times drawn for a
    seed are the same with or without the others; streams not given are spawned from ``rng``'s
    seed, so a run is reproducible either way."""

    CHUNK = 512
    CELLS = 2_000_000  # RTTs drawn at once at most: a large inventory's N² per request is taken in smaller chunks

    def __init__(self, cv: np.ndarray, rng: np.random.Generator, links: tuple[np.ndarray, np.ndarray] | None = None,
                 link_rng: np.random.Generator | None = None, routes: bool = True,
                 route_rng: np.random.Generator | None = None):
        self.cv, self.rng = cv, rng
        spawned = rng.bit_generator.seed_seq.spawn(2)
        self.links = links if links is not None and any(bool((a > 0).any()) for a in links) else None
        self.link_rng = link_rng if link_rng is not None else np.random.default_rng(spawned[0])
        self.routes = routes
        self.route_rng = route_rng if route_rng is not None else np.random.default_rng(spawned[1])
        self.any = bool((cv > 0).any()) or self.links is not None

    def latencies(self, model: LatencyModel, X: np.ndarray, n: int, entry: int | None = None,
                  E: np.ndarray | None = None) -> np.ndarray:
        """``n`` requests' latencies (ms) on placement ``X``, each its own draw around the job times
        ``E`` (S, N: the queueing model's under load; default the model's), entering at service
        ``entry`` (``LatencyModel.request_ms``; None: D_msa). Nothing to draw: the model's value."""
        E = model.E if E is None else np.asarray(E, float)
        routed = self.routes and spread_over_nodes(X)
        if not (self.any or routed) or n == 0:
            return np.full(n, float(model.request_ms(X, model.terms(X, E=E), entry)[0]))
        chunk = self.CHUNK if self.links is None else max(1, min(self.CHUNK, self.CELLS // max(1, model.D.size)))
        out = []
        for k in range(0, n, chunk):
            m = min(chunk, n - k)
            Es = E[None] * job_factors(self.rng, self.cv, (m,))
            links = None if self.links is None else link_draws(self.link_rng, model, self.links, m)
            Xs = route_draws(self.route_rng, X, m) if routed else np.repeat(np.asarray(X, float)[None], m, axis=0)
            out.append(model.request_ms(Xs, model.terms(Xs, E=Es, links=links), entry, None if links is None else links[1]))
        return np.concatenate(out)

    def ratios(self, model: LatencyModel, X: np.ndarray, n: int, entry: int | None = None) -> np.ndarray:
        """``latencies`` at the load-free job times over the model's latency (mean about 1)."""
        return self.latencies(model, X, n, entry) / float(model.request_ms(X, model.terms(X), entry)[0])
