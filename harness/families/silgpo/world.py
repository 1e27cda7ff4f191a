"""SIL-GPO's world (paper 002): instances of microservices and AI services deployed on edge
servers, requests following service chains, the total delay of an open network of M/M/c queues.

The world (``ServiceGraph``) holds servers (CPU cores, GPUs, storage GB, bandwidth Gbps, which
pairs are directly connected), services (CPU, GPU and storage per instance, processing rate μ,
output size in MB, AI or not) and requests (a chain of distinct services, a Poisson rate λ, an
entry server, a packet size). A deployment is X (S × N): instances of each service on each
server. Routing is not decided: it follows from X (eq. 52) — from server n, a request's traffic
to its next service m' splits over the servers reachable from n that host m', in proportion to
their instances of m'. The first service runs on the request's entry server (p = 1). Each
(service, server) with x instances is an M/M/x queue (Erlang C, eqs. 35-37; the waiting term is
``sim.erlang``'s); flows superpose (eq. 31).

``delay(world, X)`` is the objective (eq. 41; past ρ 0.99 harness's bound, below), split into its
four terms:

- transmission (33): the request's packet size over the entry server's bandwidth;
- sojourn (36-37): for each request, the probability it is served at (m, n) times W(m, n);
- communication (38): a hop n → n' (n ≠ n') carries the caller's output over the link, whose
  bandwidth is the slower end's (the paper's B_{n,n'}; the code has one bandwidth per server);
- return (39): the last service's output over the bandwidth of the server that ran it;

summed over requests (eq. 40 per request, 41 over them), in seconds: sizes in MB and bandwidths
in Gbps, so a size over a bandwidth is 8·MB / (1000·Gbps) seconds; μ per second.

A queue at ρ ≥ 1 is infeasible (eq. 35 is a constraint in the paper), yet a deployment built an
instance at a time passes through such states and needs a finite delay. harness's choice, not the
paper's: a queue at ρ ≥ 0.99 (the code's stability bound) is scored as one at 0.99, so its sojourn
never falls as its load rises (a feasible queue at 0.99 ≤ ρ < 1 is scored below its own). The
code's flat W = 5 / 10, taken over into seconds, did fall: below a queue near ρ = 1, whose sojourn
grows without bound (on the authors' instance a random step to ρ 0.9999 cost 8,600 s and the next
step's reward was ±79,000, against a median of 61). ``Delay.unstable`` counts the queues at ρ ≥ 1,
and a final deployment with any is infeasible.

``silgpo_compat=True`` computes what the authors' code computes (``NEW_PPO/Environment.py`` at
commit 17451c5, ``get_total_delay``), which is what every figure of the paper plots. Departures
from the paper's form, each reproduced under ``silgpo_compat``:

1. **Units.** The code divides sizes in units of 100 MB by bandwidths in units of 0.1 Gbps (a
   server of 2.5 Gbps is 25): abstract units, 1/8 of the seconds above.
2. **λ-weighting.** The code multiplies the transmission, communication and return terms by the
   flow's rate (λ_r times the hop's probability) instead of the probability alone.
3. **Sojourn.** The code sums W(m, n) once per (m, n) that carries traffic — not weighted by
   probability, not per request.
4. **Transmission.** The code sends the first service's output size, not the request's packet
   size (which it draws and never uses).
5. **Bandwidth.** The code's hop n → n' uses n''s one bandwidth, not the link's.
6. **Stability.** The code scores ρ ≥ 0.99 (not 1) as unstable, with a flat W = 5 or 10.
7. **Routing.** The code rounds each routing probability to 3 decimals.
8. **Preferred servers** (each service's first instance, and so each request's entry server).
   The paper has no rule; the code's pairs each AI service with the *last* microservice in its
   priority list that ever meets it (its running maximum never moves), counts a chain's first
   AI service under its AI index (as a microservice), and puts a microservice beyond the servers
   beside the one it meets most — a service not always placed yet (the code then indexes with
   None and stops). ``code_instance`` keeps that rule; ``generate`` pairs each AI service with
   the microservice that meets it most and a late microservice beside the placed one it meets
   most.

The paper's prose and the code also differ in the generated values (``ServiceGraphConfig``):
AI rates U[15, 25] in the paper, 1 / Σ 1/r_k over 2-3 stages r_k ∈ {20..29} in the code; see
``generate``. ``code_instance(seed=3)`` draws exactly the authors' instance: their random calls,
in their order.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

import numpy as np

from harness.sim.erlang import mmc_sojourn


UNSTABLE_W = (5.0, 10.0)  # the code's sojourn for an unstable queue: microservice, AI service
RHO_BOUND = 0.99  # the code's stability bound; the paper's form scores a queue past it as one at it
UNROUTABLE = 5.0  # the code's delay for a hop with no server to go to


@dataclass(frozen=True)
class ServiceGraphConfig:
    """One setting of the paper's §V-A (defaults: the default setting; Figs 8-10 sweep a field)."""

    servers: int = 10
    hac: tuple[int, ...] = (5, 6, 7)  # the servers with GPUs (the code's EUA rows nearest the centroid)
    gpus: int = 5  # per HAC server (the code: 6 at λ in [4, 6], 7 at [5, 7])
    microservices: int = 12
    ai_services: int = 3
    requests: int = 30
    ai_requests: int = 10
    arrival: tuple[float, float] = (2.0, 4.0)  # λ_r uniform
    chain: tuple[int, int] = (3, 6)  # microservices in a common request
    chain_ai_ms: tuple[int, int] = (3, 4)  # microservices in an AI request, after its AI services
    chain_ai_ai: tuple[int, int] = (1, 3)  # AI services in an AI request
    ai_rate: tuple[float, float] = (15.0, 25.0)  # paper; the code's stages give 8.8-14
    ms_rate: tuple[int, int] = (7, 10)
    silgpo_compat: bool = False

    def sweep(self, figure: str, value) -> "ServiceGraphConfig":
        """The setting of Fig. 8 (arrival, a (low, high) pair), 9 (chain, (low, high)) or 10
        (requests, a count), as the code's Environmental_parameters set it."""
        if figure == "arrival":
            low, high = value
            return replace(self, arrival=(float(low), float(high)), gpus={4: 6, 5: 7}.get(int(low), 5))
        if figure == "chain":
            low, high = value
            # common requests: low..high microservices; AI requests: the code's per-setting mix
            ai_ms, ai_ai = {2: ((1, 3), (1, 1)), 3: ((2, 3), (1, 2)), 4: ((3, 3), (1, 3)), 5: ((4, 4), (1, 3)),
                            6: ((5, 5), (1, 3))}[int(low)]
            return replace(self, chain=(int(low), int(high)), chain_ai_ms=ai_ms, chain_ai_ai=ai_ai)
        if figure == "requests":
            n = int(value)
            return replace(self, requests=n, ai_requests={10: 4, 20: 7, 30: 10, 40: 13, 50: 16}.get(n, round(n / 3)))
        raise ValueError(f"figure must be arrival, chain or requests, not {figure!r}")


def parse_sweep(text: str) -> tuple[str, object]:
    """A setting of Figs 8-10 as ``harness train --sweep`` takes it (``arrival=LOW,HIGH``,
    ``chain=LOW,HIGH``, ``requests=N``): (figure, (low, high) or a count), whole numbers as ints;
    ValueError naming what is wrong."""
    figure, _, value = text.partition("=")
    if figure not in ("arrival", "chain", "requests"):
        raise ValueError(f"no figure sweeps {figure!r}")
    parsed = tuple(float(v) for v in value.split(","))
    if len(parsed) != (1 if figure == "requests" else 2):
        raise ValueError(f"{len(parsed)} value(s)")
    parsed = tuple(int(v) if v.is_integer() else v for v in parsed)
    return figure, parsed if len(parsed) == 2 else parsed[0]


@dataclass
class ServiceGraph:
    """One generated instance of the world (arrays indexed by server n and service m)."""

    cpu: np.ndarray  # (N,) cores
    gpu: np.ndarray  # (N,)
    mem: np.ndarray  # (N,) GB
    bw: np.ndarray  # (N,) Gbps
    adj: np.ndarray  # (N, N) bool, self-loops included
    s_cpu: np.ndarray  # (S,) per instance
    s_gpu: np.ndarray
    s_mem: np.ndarray
    s_out: np.ndarray  # (S,) output size, MB
    mu: np.ndarray  # (S,) processing rate per second
    ai: np.ndarray  # (S,) bool
    chains: list[np.ndarray]  # per request, service indices
    rate: np.ndarray  # (R,) λ_r
    size_in: np.ndarray  # (R,) packet size, MB
    preferred: np.ndarray = field(default=None)  # (S,) each service's preferred server
    compat: bool = False

    @property
    def N(self) -> int:
        return len(self.cpu)

    @property
    def S(self) -> int:
        return len(self.mu)

    def __post_init__(self):
        self.lengths = np.array([len(c) for c in self.chains])
        self.padded = np.full((len(self.chains), self.lengths.max()), -1)  # (R, L) chains, -1 past the end
        for r, c in enumerate(self.chains):
            self.padded[r, :len(c)] = c

    @property
    def entry(self) -> np.ndarray:
        """(R,) each request's entry server: its first service's preferred server."""
        return self.preferred[[c[0] for c in self.chains]]

    def service_rates(self) -> np.ndarray:
        """(S,) Λ_m: the rate of the requests whose chain holds m."""
        lam = np.zeros(self.S)
        for chain, r in zip(self.chains, self.rate):
            lam[chain] += r
        return lam

    def demand(self) -> np.ndarray:
        """(S,) instances to place per service (Alg. 1 lines 3-4, the code's ⌈(Λ_m + 1) / μ_m⌉)."""
        return np.ceil((self.service_rates() + 1) / self.mu).astype(int)

    def to_place(self) -> np.ndarray:
        """The services of the instances an episode places, in order: AI services first."""
        d = self.demand()
        order = [m for m in range(self.S) if self.ai[m]] + [m for m in range(self.S) if not self.ai[m]]
        return np.array([m for m in order for _ in range(d[m])], int)

    def initial(self) -> np.ndarray:
        """(S, N) the deployment an episode starts from: one instance of each service on its
        preferred server (Alg. 1 lines 5-6)."""
        X = np.zeros((self.S, self.N), int)
        X[np.arange(self.S), self.preferred] = 1
        return X

    def used(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(N,) CPU, GPU and storage X takes on each server."""
        return self.s_cpu @ X, self.s_gpu @ X, self.s_mem @ X

    def fits(self, X: np.ndarray, m: int) -> np.ndarray:
        """(N,) whether one more instance of m fits on each server (eqs. 25-27; the code's
        storage test is strict)."""
        return self.room(self.used(X), m)

    def room(self, used: tuple[np.ndarray, np.ndarray, np.ndarray], m: int, at=slice(None)):
        """``fits`` given what is used (``used(X)``), on every server or on server ``at`` alone:
        for a caller that adds instances one by one and keeps the sums itself (the resources are
        whole cores, GPUs and GB, so a running sum is ``used``'s exactly)."""
        cpu, gpu, mem = (u[at] for u in used)
        room_mem = mem + self.s_mem[m] < self.mem[at] if self.compat else mem + self.s_mem[m] <= self.mem[at]
        return (cpu + self.s_cpu[m] <= self.cpu[at]) & (gpu + self.s_gpu[m] <= self.gpu[at]) & room_mem

    def feasible(self, X: np.ndarray) -> bool:
        cpu, gpu, mem = self.used(X)
        return bool(np.all(cpu <= self.cpu) & np.all(gpu <= self.gpu) & np.all(mem <= self.mem))


# ---------------------------------------------------------------------------------- the model
def seconds_over(mb, gbps):
    """Seconds a size in MB takes over a bandwidth in Gbps (the paper's form of eqs. 33, 38, 39)."""
    return 8 * mb / 1000 / gbps


@dataclass
class Delay:
    transmission: float
    sojourn: float
    communication: float
    ret: float
    per_request: np.ndarray  # (R,) T_r (compat: its network terms only; the sojourn is not per request)
    unstable: int  # queues with traffic at ρ ≥ 1 (compat 0.99)
    unroutable: int  # hops with no reachable server hosting the next service

    @property
    def total(self) -> float:
        return self.transmission + self.sojourn + self.communication + self.ret


def routing(g: ServiceGraph, X: np.ndarray) -> np.ndarray:
    """(S, N, N) eq. 52: the share of service m's traffic at server n that goes to server n'."""
    w = g.adj[None, :, :] * X[:, None, :]
    total = w.sum(axis=2, keepdims=True)
    P = np.divide(w, total, out=np.zeros(w.shape), where=total > 0)
    return np.round(P, 3) if g.compat else P


def visits(g: ServiceGraph, P: np.ndarray) -> np.ndarray:
    """(R, L, N) the probability request r is served by the k-th service of its chain on server n
    (q^r_k: eq. 32 summed over paths); zero past a chain's end."""
    ch, R = g.padded, len(g.chains)
    Q = np.zeros((R, ch.shape[1], g.N))
    Q[np.arange(R), 0, g.entry] = 1.0
    for k in range(1, ch.shape[1]):
        on = ch[:, k] >= 0
        Q[on, k] = np.einsum("rn,rnm->rm", Q[on, k - 1], P[ch[on, k]])
    return Q


def arrivals(g: ServiceGraph, Q: np.ndarray) -> np.ndarray:
    """(S, N) λ_{m,n}, eq. 31: the superposed flows of every request at each (service, server)."""
    lam = np.zeros((g.S, g.N))
    on = g.padded >= 0
    np.add.at(lam, g.padded[on], (g.rate[:, None, None] * Q)[on])
    return lam


def sojourn(g: ServiceGraph, lam: np.ndarray, X: np.ndarray) -> tuple[np.ndarray, int]:
    """(S, N) W(m, n), the mean time in queue and service at each (m, n) with traffic, and the
    count of unstable queues: the code's ρ ≥ 0.99 scored UNSTABLE_W; the paper's ρ ≥ 1, every
    queue past ``RHO_BOUND`` scored as one at it."""
    W = np.zeros(lam.shape)
    busy = (lam > 0) & (X > 0)
    m, n = np.nonzero(busy)
    c, rate, mu = X[m, n].astype(float), lam[m, n], g.mu[m]
    rho = rate / (c * mu)
    if not g.compat:
        W[m, n] = mmc_sojourn(c, np.minimum(rate, RHO_BOUND * c * mu), mu)
        return W, int((rho >= 1.0).sum())
    stable = rho < RHO_BOUND
    W[m[stable], n[stable]] = mmc_sojourn(c[stable], rate[stable], mu[stable])
    W[m[~stable], n[~stable]] = np.where(g.ai[m[~stable]], UNSTABLE_W[1], UNSTABLE_W[0])
    return W, int((~stable).sum())


def delay(g: ServiceGraph, X: np.ndarray) -> Delay:
    """The total delay of deployment X (eqs. 33-41), in the paper's form or the code's."""
    X = np.asarray(X)
    P = routing(g, X)
    Q = visits(g, P)
    lam = arrivals(g, Q)
    W, unstable = sojourn(g, lam, X)
    ch, R = g.padded, len(g.chains)
    last = ch[np.arange(R), g.lengths - 1]
    if g.compat:  # the code's units (100 MB over 0.1 Gbps), its one bandwidth per server, λ-weighted
        size, weight = g.s_out / 100, g.rate
        hop_bw, srv_bw, first = np.broadcast_to(g.bw * 10, (g.N, g.N)), g.bw * 10, g.s_out[ch[:, 0]] / 100
    else:
        size, weight = seconds_over(g.s_out, 1.0), np.ones(R)
        hop_bw, srv_bw, first = np.minimum(g.bw[:, None], g.bw[None, :]), g.bw, seconds_over(g.size_in, 1.0)
    tr = weight * first / srv_bw[g.entry]
    co, so, lost = np.zeros(R), np.zeros(R), 0
    cost = (1 - np.eye(g.N)) / hop_bw  # per unit of size, a hop between two servers
    for k in range(1, ch.shape[1]):
        on = np.flatnonzero(ch[:, k] >= 0)
        flow = Q[on, k - 1][:, :, None] * P[ch[on, k]]  # (r, n, n') the probability of each hop
        dead = Q[on, k].sum(axis=1) == 0
        lost += int(dead.sum())
        co[on] += np.where(dead, UNROUTABLE, weight[on] * size[ch[on, k - 1]] * (flow * cost).sum(axis=(1, 2)))
    re = weight * (Q[np.arange(R), g.lengths - 1] @ (1 / srv_bw)) * size[last]
    if g.compat:
        soj = float(W.sum())
    else:
        on = ch >= 0
        so = np.where(on, (Q * W[np.where(on, ch, 0)]).sum(axis=2), 0.0).sum(axis=1)
        soj = float(so.sum())
    return Delay(float(tr.sum()), soj, float(co.sum()), float(re.sum()), tr + so + co + re, unstable, lost)


# ---------------------------------------------------------------------------------- generators
def _preferred(g: ServiceGraph, code_rule: bool) -> np.ndarray:
    """Each service's preferred server (the code's ``get_ms_arrival_first_node``): the AI
    services, by decreasing Λ, on the highest-bandwidth servers, each with the microservice that
    follows it; the other microservices by decreasing Λ on the other servers, by bandwidth; when
    servers run out, beside the placed microservice they meet most."""
    lam = g.service_rates()
    servers = sorted(range(g.N), key=lambda n: g.bw[n], reverse=True)  # stable: ties by index
    n_ai = int(g.ai.sum())
    big, small = servers[:n_ai], servers[n_ai:]
    dep = np.eye(g.S, dtype=int)
    for chain in g.chains:
        chain = list(chain)
        if code_rule and g.ai[chain[0]]:  # the code counts a chain's first AI service by its AI index
            chain[0] -= int((~g.ai).sum())
        for a, b in zip(chain[:-1], chain[1:]):
            dep[a, b] += 1
            dep[b, a] += 1
    by_rate = sorted(range(g.S), key=lambda m: lam[m], reverse=True)
    ms = [m for m in by_rate if not g.ai[m]]
    pref: dict[int, int] = {}
    for k, a in enumerate(m for m in by_rate if g.ai[m]):
        pref[a] = big[k]
        if code_rule:  # the code keeps the last that follows it (its running maximum never moves)
            mate = next((m for m in reversed(ms) if dep[a, m] > 0), None)
        else:
            mate = max(ms, key=lambda m: dep[a, m]) if ms and dep[a, ms].max() > 0 else None
        if mate is not None:
            pref[mate] = big[k]
            ms.remove(mate)
    for i, m in enumerate(ms):
        if i < len(small):
            pref[m] = small[i]
            continue
        if code_rule:  # the first it meets most among all (itself counts once): it must be placed already
            best = max(ms, key=lambda o: dep[o, m])
            if best not in pref:
                raise ValueError("the code's preferred-server rule meets a service not yet placed on this instance")
        else:
            best = max(ms[:i], key=lambda o: dep[o, m])
        pref[m] = pref[best]
    return np.array([pref[m] for m in range(g.S)], int)


def _build(cfg: ServiceGraphConfig, ms_rate, ai_rate, chains, rate, size_in, bw, code_rule: bool = False) -> ServiceGraph:
    N, M, A = cfg.servers, cfg.microservices, cfg.ai_services
    hac = np.zeros(N, bool)
    hac[list(cfg.hac)] = True
    ai = np.r_[np.zeros(M, bool), np.ones(A, bool)]
    g = ServiceGraph(
        cpu=np.where(hac, 30.0, 20.0), gpu=np.where(hac, float(cfg.gpus), 0.0), mem=np.where(hac, 500.0, 250.0),
        bw=np.asarray(bw, float), adj=np.ones((N, N), bool),  # the CBD servers lie within 5 km: all connected
        s_cpu=np.where(ai, 3.0, 1.0), s_gpu=np.where(ai, 1.0, 0.0), s_mem=np.where(ai, 65.0, 13.0),
        s_out=np.where(ai, 300.0, 100.0), mu=np.r_[np.asarray(ms_rate, float), np.asarray(ai_rate, float)], ai=ai,
        chains=[np.asarray(c, int) for c in chains], rate=np.asarray(rate, float), size_in=np.asarray(size_in, float),
        compat=cfg.silgpo_compat)
    g.preferred = _preferred(g, code_rule)
    return g


def generate(cfg: ServiceGraphConfig = ServiceGraphConfig(), seed: int = 0) -> ServiceGraph:
    """A random instance of the setting ``cfg`` (numpy's generator). AI rates: the paper's
    U[cfg.ai_rate], or under ``silgpo_compat`` the code's 2-3 stages. An AI request's chain is
    its AI services followed by its microservices (the code's); a request's packet size is the
    code's unused draw, 10-15, read as MB."""
    rng = np.random.default_rng(seed)
    M, A = cfg.microservices, cfg.ai_services
    ms_rate = rng.integers(cfg.ms_rate[0], cfg.ms_rate[1] + 1, M)
    if cfg.silgpo_compat:
        ai_rate = [round(1 / sum(1 / rng.integers(20, 30, rng.integers(2, 4))), 4) for _ in range(A)]
    else:
        ai_rate = rng.uniform(*cfg.ai_rate, A)
    chains, rate, size_in = [], [], []
    for r in range(cfg.requests):
        rate.append(rng.uniform(*cfg.arrival))
        size_in.append(rng.integers(10, 16))
        if r < cfg.ai_requests:
            n_ms, n_ai = rng.integers(cfg.chain_ai_ms[0], cfg.chain_ai_ms[1] + 1), \
                rng.integers(cfg.chain_ai_ai[0], cfg.chain_ai_ai[1] + 1)
            chain = list(M + rng.choice(A, n_ai, replace=False)) + list(rng.choice(M, n_ms, replace=False))
        else:
            chain = list(rng.choice(M, rng.integers(cfg.chain[0], cfg.chain[1] + 1), replace=False))
        chains.append(chain)
    hac = np.isin(np.arange(cfg.servers), cfg.hac)
    bw = np.where(hac, rng.integers(40, 61, cfg.servers), rng.integers(20, 31, cfg.servers)) / 10
    return _build(cfg, ms_rate, ai_rate, chains, rate, size_in, bw)


def code_instance(cfg: ServiceGraphConfig = ServiceGraphConfig(silgpo_compat=True), seed: int = 3) -> ServiceGraph:
    """The instance the authors' code builds with ``random.seed(seed); np.random.seed(seed)``: the
    same calls of Python's and numpy's legacy generators in the same order (services, AI
    services, users, servers), so that seed 3 is their default setting."""
    py, legacy = random.Random(seed), np.random.RandomState(seed)
    M, A = cfg.microservices, cfg.ai_services
    ms_rate = [py.randint(*cfg.ms_rate) for _ in range(M)]
    ai_rate = []
    for _ in range(A):
        stages = legacy.randint(low=20, high=30, size=py.randint(2, 3))
        ai_rate.append(round(1 / sum(1 / s for s in stages), 4))
    chains, rate, size_in = [], [], []
    for r in range(cfg.requests):
        rate.append(py.uniform(*cfg.arrival))
        size_in.append(py.randint(10, 15))
        ms, ais = list(range(M)), list(range(A))
        chain = []
        if r >= cfg.ai_requests:
            for _ in range(py.randint(*cfg.chain)):
                chain.append(m := py.choice(ms))
                ms.remove(m)
        else:
            n_ms, n_ai = py.randint(*cfg.chain_ai_ms), py.randint(*cfg.chain_ai_ai)
            for _ in range(n_ai):
                chain.append(M + (a := py.choice(ais)))
                ais.remove(a)
            for _ in range(n_ms):
                chain.append(m := py.choice(ms))
                ms.remove(m)
        chains.append(chain)
    legacy.choice(range(0, 20), size=10, replace=False)  # drawn by the code, unused
    hac = np.isin(np.arange(cfg.servers), cfg.hac)
    bw = [py.randint(40, 60) if hac[n] else py.randint(20, 30) for n in range(cfg.servers)]
    return _build(cfg, ms_rate, ai_rate, chains, rate, size_in, np.asarray(bw) / 10, code_rule=True)


def paper_units(g: ServiceGraph) -> ServiceGraph:
    """The same instance scored in the paper's form (seconds), whatever form it was built in."""
    return replace(g, compat=False)
