"""The latency of every request of a known arrival trace: a discrete-event replay of REACH's model
on processor-sharing nodes.

``sim.queueing`` gives the *mean* latency a Poisson rate would give in the long run. Near
saturation one run's mean is far from that long-run mean: a burst of arrivals builds a queue that
takes seconds to drain, and the 30 s stretches of one run differ 2-5×. When the arrivals are known
— an open-loop load generator records the time it sent each request — the same queues can be
replayed on exactly those arrivals, and each request gets its own predicted latency. Measured and
predicted then share the bursts, so their difference is less noisy than either
(``results.stats.paired_error``).
What they cannot share is the cells' own speed, which swings from one 5 s stretch to the next;
near saturation that noise stays (studies/fidelity/README.md, "Open-loop load").

The network (same semantics as ``sim.latency``'s eqs. 2-9, taken from the ``LatencyModel``):

- a request enters at one of the entry services (equal chance), at one of its replicas (round
  robin), half the user's round trip after it was sent, and returns half a round trip after the
  entry service finishes;
- a service first runs its job (``E[s, n]`` ms of work: its time alone on the node), then its
  groups at once, and within a group its calls one after another; a call with weight w (its
  probability × seq_len / k) is made with probability w; each call pays half the round trip
  ``D[n, m]`` each way and goes to the callee's replicas in turn; a service is done when its
  last group is;
- every node is one processor-sharing server: k jobs on it each progress at 1/k;
- ``capacity`` c (as in ``sim.queueing``: the share of the node's CPU that requests' jobs get)
  below 1 leaves, after each job of E ms, E·(1/c − 1) ms of other work on its node — the cell's
  serving CPU the profile's times leave out — which shares the node but holds no request up. So
  a node is busy λ·E/c of the time, as ``sim.queueing``'s ρ = λ·E/c says, and a request alone
  still takes exactly E.

Parallel callees on one node share its CPU here, where the load-free model lets each take its
time alone; otherwise a request alone gets exactly the model's D_msa (tested).
"""

from __future__ import annotations

import heapq
from itertools import count

import numpy as np

from harness.sim.latency import LatencyModel
from harness.sim.variability import job_factors


def replay_ms(model: LatencyModel, X: np.ndarray, arrivals_s, capacity: float = 1.0, seed: int = 0,
              slowdown: tuple[np.ndarray, np.ndarray] | None = None, job_cv: np.ndarray | None = None,
              link_sd: tuple[np.ndarray, np.ndarray] | None = None, entry: int | None = None) -> np.ndarray:
    """Each request's latency (ms) when requests enter the placement ``X`` (S, N replica counts) at
    ``arrivals_s`` (seconds, sorted or not), in the arrivals' order. ``seed`` draws the calls made
    with a weight below 1 and the entry of each request (``entry``, a service's index: every
    request enters there). ``slowdown``: (edges (K+1,) in the
    arrivals' clock, factors (K,)): between edges k and k+1 every job needs factors[k] × its work
    (the host's speed drifts; ``host_slowdown``); before the first edge the first factor, after
    the last the last. ``job_cv`` (S, N): each job's work drawn around E with that coefficient of
    variation (``sim.variability``; its own stream of the seed). ``link_sd`` ((N, N), (N,) ms:
    ``variability.link_sd``): each call's and each user's round trip drawn around the model's RTT
    with that standard deviation (another stream of the seed)."""
    if not 0 < capacity <= 1:
        raise ValueError("capacity must be in (0, 1]")
    if slowdown is not None and (len(slowdown[0]) != len(slowdown[1]) + 1 or np.any(np.asarray(slowdown[1]) <= 0)):
        raise ValueError("slowdown needs K+1 edges and K positive factors")
    X = np.asarray(X)
    arrivals = np.asarray(arrivals_s, float) * 1000.0
    if not len(arrivals):
        return np.empty(0)
    order = np.argsort(arrivals, kind="stable")
    t0 = float(arrivals[order[0]])
    rng = np.random.default_rng(seed)
    spread = None
    if job_cv is not None and np.any(job_cv > 0):
        job_rng = np.random.default_rng([seed, 1])
        spread = lambda s, n: float(job_factors(job_rng, job_cv[s, n]))  # noqa: E731
    E, user = model.E, model.user_rtt
    RT, RS, RG = model.rtt  # D[n, m] per group of nodes (latency_kernel.rtt)
    rtt = lambda n, m: float(RS[RG[n]] if n == m else RT[RG[n], RG[m]])  # noqa: E731
    to_user = lambda n: float(user[n])  # noqa: E731
    if link_sd is not None and any(np.any(a > 0) for a in link_sd):
        link_rng = np.random.default_rng([seed, 2])
        D = model.D  # a measured testbed's links, each its own spread: dense, as a testbed is small
        cv_d = np.where(D > 0, link_sd[0] / np.where(D > 0, D, 1.0), 0.0)
        cv_u = np.where(user > 0, link_sd[1] / np.where(user > 0, user, 1.0), 0.0)
        rtt = lambda n, m: float(D[n, m] * job_factors(link_rng, cv_d[n, m]))  # noqa: E731
        to_user = lambda n: float(user[n] * job_factors(link_rng, cv_u[n]))  # noqa: E731
    N = X.shape[1]
    replicas = [np.repeat(np.arange(N), X[s].astype(int)).tolist() for s in range(model.S)]
    if any(not r for r in replicas):
        raise ValueError("every service needs at least one replica")
    turn = [0] * model.S
    overhead = 1.0 / capacity - 1.0  # the work each job leaves behind on its node, per ms of job
    groups = [[(list(map(int, cs)), list(map(float, w))) for cs, w in gs] for gs in model.groups]

    timed: list = []  # (time, tie-break, callback)
    tie = count()
    jobs: list[dict[int, tuple[float, object]]] = [dict() for _ in range(N)]  # node -> job id -> (work left, done)
    busy: set[int] = set()  # the nodes with a job: only they are looked at (a thousand nodes, a few busy)
    job_ids = count()
    done_at = np.full(len(arrivals), np.nan)

    def later(t, fn):
        heapq.heappush(timed, (t, next(tie), fn))

    def replica(s):
        n = replicas[s][turn[s] % len(replicas[s])]
        turn[s] += 1
        return n

    def visit(s, n, t, finished):
        """Service s on node n, starting at t; ``finished(t)`` when its job and all its calls are done."""
        def after_job(t):
            pending = [len(groups[s])]
            if not pending[0]:
                finished(t)
                return

            def group_done(t):
                pending[0] -= 1
                if not pending[0]:
                    finished(t)
            for callees, weights in groups[s]:
                made = [j for j, w in zip(callees, weights) if w >= 1 or rng.random() < w]
                call_next(made, 0, n, t, group_done)

        def job_done(t):
            if overhead > 0:
                jobs[n][next(job_ids)] = (overhead * float(E[s, n]), lambda t: None)
                busy.add(n)
            after_job(t)
        jobs[n][next(job_ids)] = (float(E[s, n]) * (spread(s, n) if spread else 1.0), job_done)
        busy.add(n)

    def call_next(made, k, n, t, group_done):
        if k == len(made):
            group_done(t)
            return
        j = made[k]
        m = replica(j)
        half = rtt(n, m) / 2
        back = lambda t: later(t + half, lambda t: call_next(made, k + 1, n, t, group_done))  # noqa: E731
        later(t + half, lambda t: visit(j, m, t, back))

    def enter(i, t):
        if entry is not None:
            s = entry
        else:
            s = model.entries[int(rng.integers(len(model.entries)))] if len(model.entries) > 1 else model.entries[0]
        n = replica(s)
        half = to_user(n) / 2

        def finished(t):
            done_at[i] = t + half
        later(t + half, lambda t: visit(s, n, t, finished))

    for i in order:
        later(float(arrivals[i]) - t0, lambda t, i=i: enter(i, t))
    edges = factors = None
    if slowdown is not None:
        edges, factors = np.asarray(slowdown[0], float) * 1000.0 - t0, np.asarray(slowdown[1], float)
        for e in edges[1:-1]:
            if e > 0:
                later(float(e), lambda t: None)  # the speed changes here: rates are recomputed at every event

    def slow(t):
        if factors is None:
            return 1.0
        return float(factors[min(max(int(np.searchsorted(edges, t, side="right")) - 1, 0), len(factors) - 1)])

    now = 0.0
    while timed or busy:
        # the next job to finish on any node, at its node's current speed (nodes in order: ties
        # go to the first, as over every node)
        first_job, first_t, f = None, np.inf, slow(now)
        order = sorted(busy)
        for n in order:
            k = len(jobs[n])
            jid, (left, _) = min(jobs[n].items(), key=lambda kv: kv[1][0])
            t = now + left * f * k
            if t < first_t:
                first_job, first_t = (n, jid), t
        t_next = min(first_t, timed[0][0] if timed else np.inf)
        for n in order:
            v = (t_next - now) / (len(jobs[n]) * f)
            jobs[n] = {jid: (left - v, fn) for jid, (left, fn) in jobs[n].items()}
        now = t_next
        if timed and timed[0][0] <= first_t:
            _, _, fn = heapq.heappop(timed)
            fn(now)
        else:
            n, jid = first_job
            _, fn = jobs[n].pop(jid)
            if not jobs[n]:
                busy.discard(n)
            fn(now)
    return done_at - (arrivals - t0)


def host_slowdown(times_s, cpu_ms, reference_ms: float) -> tuple[np.ndarray, np.ndarray]:
    """``replay_ms``'s ``slowdown`` from samples of the host's speed (``testbed.speed.host_samples``:
    CPU ms of a fixed job at ``times_s``): each sample holds from halfway since the one before to
    halfway to the next, as its time over ``reference_ms`` (the speed the model's times were
    measured at)."""
    t, ms = np.asarray(times_s, float), np.asarray(cpu_ms, float)
    if len(t) < 1 or reference_ms <= 0:
        raise ValueError("host_slowdown needs at least one sample and a positive reference")
    k = np.argsort(t, kind="stable")
    t, ms = t[k], ms[k]
    mid = (t[1:] + t[:-1]) / 2
    return np.concatenate([[t[0] - 1e9], mid, [t[-1] + 1e9]]), ms / reference_ms
