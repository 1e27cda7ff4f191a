"""HephaestusForge's world (paper 001): deployment requests admitted onto one of C clusters.

Each step one request arrives: R replicas of a Cloud2Edge service (CPU ω_cpu, memory ω_mem, a
latency threshold Δ_r). The action puts all R in cluster c (0..C-1), spreads them by a heuristic
(C: FFD, C+1: FFI, C+2: BF1B1; Alg. 1 and §6), or rejects the request (C+3). A cluster has room
for R replicas while its allocation plus R·ω stays within ``fill`` (0.95) of its capacity; the
mask allows deploy-all-c only then (eq. 3); spreading and rejecting are always allowed, and a
spread that does not fit is rejected. Clusters are drawn from Table 4's five types at each
reset, with a background allocation and random inter-cluster latencies (1-1000 ms; δ_c is the
mean of c's row), which drift up as replicas arrive and down as they leave. The reward (eqs.
4-10): accepted, ω_l(1 − λ̂) + ω_c(1 − Γ̂) + ω_i(1 − G) with λ̂, Γ̂ the latency and cost
min-max normalised on [1, 1000] ms and [1, 16]; rejected while some cluster had room, −1.

The observation is the (C+4) × 10 set of the paper: one row per cluster (allocated and capacity
CPU and memory, δ_c) and four rows of −1 (the spread actions and reject), each with the request
(R, ω_cpu, ω_mem, Δ_r, T_r) beside it: one row per action, so a permutation-equivariant net gives
one logit per action for any C.

Where the authors' code differs from the paper, ``hf_compat=True`` does as the code does (each
difference below); by default the paper's semantics:

1. **Lifetimes.** Paper: a request holds its resources for an exponential lifetime (mean
   ``mean_lifetime``). Code: the request's departure time is never set (it stays 0), so every
   accepted request is released when the next one arrives; clusters never hold more than the
   background and the request of the moment.
2. **T_r.** Paper: the inter-arrival time. Code: the lifetime drawn for the request (unused).
3. **Reset.** Paper: an episode starts empty. Code: a request still running at the reset is
   released against the new episode's clusters.
4. **Rejecting with every cluster full.** Paper: no reward (0). Code: +1.
5. **Gini.** Paper: over the replicas running in each cluster. Code: over the replicas the
   episode has placed in each cluster, never decremented.
6. **Latency drift.** Paper: "a random factor of up to 15 %" up on deploying, down on leaving.
   Code: ×1.15 for deploy-all (÷1.15 on leaving), ×1.05 per cluster of a spread (÷1.10).
7. **FFI.** Paper: first fit in increasing order of free CPU. Code: the FFI action runs FFD.

The baselines (``harness.families.hephaestus.baselines``) add one more difference of the authors' script
(their cluster range); see there.

**The sites mode** (``inventory=FILE``, or ``sites=`` built from a live cluster's view): the
clusters are a harness inventory's sites instead of Table 4's random draws, fixed at every reset —
capacity the sum of the site's nodes', cost per replica the mean of its nodes' cost per hour,
latency the configured RTT between the sites' nodes (mean over node pairs; 0 on the diagonal, as
the paper's matrix), which does not drift: a testbed's RTTs are what they are. A model trained
there runs unchanged on the testbed (``harness.families.hephaestus.admission``).
"""

from __future__ import annotations

import dataclasses
import functools
import heapq
import itertools
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

# Table 4 (Amazon EC2 on-demand): cores, memory GB, cost τ_c
CLUSTER_TYPES = (("edge-tier-1", 2.0, 2.0, 1.0), ("edge-tier-2", 2.0, 4.0, 2.0), ("fog-tier-1", 2.0, 8.0, 4.0),
                 ("fog-tier-2", 4.0, 16.0, 8.0), ("cloud", 8.0, 32.0, 16.0))
MIN_DELAY, MAX_DELAY = 1.0, 1000.0  # ms
MIN_COST, MAX_COST = 1.0, 16.0
SPREADS = ("ffd", "ffi", "bf1b1")
EXTRA_ROWS = len(SPREADS) + 1  # the spread actions and reject
FEATURES = 10

# Table 6's weightings (ω_l, ω_c, ω_i)
OBJECTIVES = {"latency": (1.0, 0.0, 0.0), "cost": (0.0, 1.0, 0.0), "inequality": (0.0, 0.0, 1.0),
              "latcost": (0.5, 0.5, 0.0), "latineq": (0.5, 0.0, 0.5), "costineq": (0.0, 0.5, 0.5),
              "balanced": (0.4, 0.3, 0.3), "favorlat": (0.6, 0.2, 0.2)}


@functools.lru_cache(maxsize=1)
def c2e_services() -> tuple[tuple[str, float, float, float], ...]:
    """(name, cores, memory GB, threshold ms) of the Cloud2Edge deployments (harness/data/c2e.yaml),
    read once: every env and every admission decision builds a world from them."""
    import yaml

    doc = yaml.safe_load((Path(__file__).resolve().parents[2] / "data" / "c2e.yaml").read_text())
    return tuple((n, float(s["cpu"]), float(s["memory_gb"]), float(s["threshold_ms"])) for n, s in doc["services"].items())


@dataclass
class MultiClusterConfig:
    clusters: int = 4
    arrival_rate: float = 100.0  # requests per time unit (the code's)
    mean_lifetime: float = 1.0  # time units
    episode_steps: int = 100
    replicas: tuple[int, int] = (1, 8)  # R uniform in [low, high): the code's default, which the logs match
    fill: float = 0.95  # the share of a cluster's capacity replicas may take
    background: tuple[float, float] = (0.0, 0.2)  # cores and GB allocated per cluster at reset, uniform
    objective: str = "favorlat"  # Table 6's weighting (the code's default)
    hf_compat: bool = False
    inventory: Optional[str] = None  # the sites mode: the clusters are this inventory's sites (see above)

    @property
    def weights(self) -> tuple[float, float, float]:
        return OBJECTIVES[self.objective]


@dataclass
class Request:
    service: str
    replicas: int
    cpu: float
    mem: float
    threshold: float
    t_r: float
    lifetime: float
    split: np.ndarray | None = None  # replicas per cluster once placed
    spread: bool = False  # placed by a spread action


@dataclass
class EpisodeStats:
    """What the authors' logs hold per episode."""

    offered: int = 0
    accepted: int = 0
    latency: list[float] = field(default_factory=list)
    cost: list[float] = field(default_factory=list)
    cpu_pct: list[float] = field(default_factory=list)

    def row(self, gini: float) -> dict:
        mean = lambda xs: float(np.mean(xs)) if xs else math.nan  # noqa: E731
        return {"rejection": 1 - self.accepted / max(1, self.offered), "cost": mean(self.cost),
                "latency": mean(self.latency), "cpu_pct": mean(self.cpu_pct), "gini": gini}


@dataclass(frozen=True)
class Sites:
    """Fixed clusters for the sites mode: one per site, in ``names`` order."""

    names: tuple[str, ...]
    cap_cpu: np.ndarray  # cores
    cap_mem: np.ndarray  # GB
    cost: np.ndarray  # per replica: the mean cost per hour of the site's nodes
    lat: np.ndarray  # (C, C) ms between the sites, 0 on the diagonal


def sites_of(inventory) -> Sites:
    """The sites of an inventory (a path or a loaded ``Inventory``); clients and nodes without a
    site are no cluster. A bad file or fewer than two sites is one UserError line."""
    from harness import shipped
    from harness.errors import UserError
    from harness.spec.inventory import load_inventory

    inv = load_inventory(shipped.find(inventory)) if isinstance(inventory, (str, Path)) else inventory
    nodes: dict[str, list] = {}
    for n in inv.nodes:
        if n.site and inv.role(inv.node_type(n).tier) != "client":
            nodes.setdefault(n.site, []).append(n)
    if len(nodes) < 2:
        raise UserError(f"{len(nodes)} site(s) with nodes pods may use; the sites mode needs two or more "
                        "(give nodes a 'site')", source=str(inventory), field="nodes")
    names = tuple(sorted(nodes))
    typ = inv.node_type
    lat = np.array([[0.0 if a == b else float(np.mean([inv.pair_rtt(x, y) for x in nodes[a] for y in nodes[b]]))
                     for b in names] for a in names])
    return Sites(names, np.array([sum(typ(n).cpus for n in nodes[s]) for s in names], float),
                 np.array([sum(typ(n).memory_gb for n in nodes[s]) for s in names], float),
                 np.array([np.mean([typ(n).cost for n in nodes[s]]) for s in names], float), lat)


def gini(loads: np.ndarray) -> float:
    """Σ_i Σ_j |L_i − L_j| / (2 n² L̄) (eq. 10); 0 when nothing is placed."""
    mean = loads.mean()
    if mean == 0:
        return 0.0
    return float(np.abs(loads[:, None] - loads[None, :]).sum() / (2 * len(loads) ** 2 * mean))


class MultiClusterEnv:
    """One environment (Gymnasium's reset/step, action_masks); ``stats`` holds the episode's
    measures and ``finished`` every finished episode's row."""

    def __init__(self, cfg: MultiClusterConfig | None = None, seed: int | None = None, sites: Sites | None = None):
        cfg = cfg or MultiClusterConfig()
        if sites is None and cfg.inventory:
            sites = sites_of(cfg.inventory)
        self.sites = sites
        self.cfg = dataclasses.replace(cfg, clusters=len(sites.names)) if sites is not None else cfg
        self.rng = np.random.default_rng(seed)
        self.services = c2e_services()
        C = self.cfg.clusters
        self.cap_cpu, self.cap_mem, self.cost = np.zeros(C), np.zeros(C), np.zeros(C)
        self.alloc_cpu, self.alloc_mem = np.zeros(C), np.zeros(C)
        self.lat = np.zeros((C, C))
        self.running: list[tuple[float, int, Request]] = []  # (departure, tie, request)
        self._tie = itertools.count()
        self.placed = np.zeros(C)  # the episode's replicas per cluster (the code's Gini)
        self.live = np.zeros(C)  # replicas running per cluster (the paper's Gini)
        self.now, self.steps = 0.0, 0
        self.request: Request | None = None
        self.stats = EpisodeStats()
        self.finished: list[dict] = []
        self._draw_clusters()
        self._next_request()

    # ------------------------------------------------------------------ the world
    @property
    def delta(self) -> np.ndarray:
        """δ_c: the mean of cluster c's latency row (its own 0 included, as the code computes it)."""
        return self.lat.mean(axis=1)

    def _draw_clusters(self) -> None:
        C = self.cfg.clusters
        lo, hi = self.cfg.background
        if self.sites is not None:
            s = self.sites
            self.lat, self.cap_cpu, self.cap_mem, self.cost = s.lat.copy(), s.cap_cpu.copy(), s.cap_mem.copy(), s.cost.copy()
            self.alloc_cpu = self.rng.uniform(lo, hi, C)
            self.alloc_mem = self.rng.uniform(lo, hi, C)
            return
        # each ordered pair drawn apart (as the code does: the matrix is not symmetric until drift)
        self.lat = self.rng.integers(int(MIN_DELAY), int(MAX_DELAY), size=(C, C)).astype(float)
        np.fill_diagonal(self.lat, 0.0)
        types = self.rng.integers(0, len(CLUSTER_TYPES), size=C)
        self.cap_cpu = np.array([CLUSTER_TYPES[t][1] for t in types])
        self.cap_mem = np.array([CLUSTER_TYPES[t][2] for t in types])
        self.cost = np.array([CLUSTER_TYPES[t][3] for t in types])
        self.alloc_cpu = self.rng.uniform(lo, hi, C)
        self.alloc_mem = self.rng.uniform(lo, hi, C)

    def _next_request(self) -> None:
        cfg = self.cfg
        gap = self.rng.exponential(1 / cfg.arrival_rate)
        lifetime = self.rng.exponential(cfg.mean_lifetime)
        self.now += gap
        while self.running and self.running[0][0] < self.now:
            self._release(heapq.heappop(self.running)[2])
        name, cpu, mem, threshold = self.services[int(self.rng.integers(len(self.services)))]
        low, high = cfg.replicas
        r = low if low == high else int(self.rng.integers(low, high))
        self.request = Request(name, r, cpu, mem, threshold, lifetime if cfg.hf_compat else gap, lifetime)

    def _drift(self, c: int, factor: float) -> None:
        if self.sites is not None:
            return  # a testbed's RTTs do not drift with its replicas
        row = np.clip(self.lat[c] * factor, MIN_DELAY, MAX_DELAY)
        row[c] = 0.0
        self.lat[c], self.lat[:, c] = row, row

    def _factor(self, spread: bool, up: bool) -> float:
        if self.cfg.hf_compat:
            f = (1.05 if spread else 1.15) if up else (1.10 if spread else 1.15)
        else:
            f = self.rng.uniform(1.0, 1.15)
        return f if up else 1 / f

    def _release(self, req: Request) -> None:
        split = req.split
        self.alloc_cpu -= split * req.cpu
        self.alloc_mem -= split * req.mem
        self.live -= split
        for c in np.flatnonzero(split):
            self._drift(int(c), self._factor(req.spread, up=False))

    # ------------------------------------------------------------------ decisions
    def room(self, replicas: np.ndarray | int = None) -> np.ndarray:
        """(C,) whether each cluster takes ``replicas`` (default all R) of the request."""
        r = self.request.replicas if replicas is None else replicas
        return ((self.alloc_cpu + r * self.request.cpu <= self.cfg.fill * self.cap_cpu)
                & (self.alloc_mem + r * self.request.mem <= self.cfg.fill * self.cap_mem))

    def action_masks(self) -> np.ndarray:
        return np.concatenate([self.room(), np.ones(EXTRA_ROWS, bool)])

    def spread(self, kind: str) -> np.ndarray | None:
        """Replicas per cluster by a spread heuristic, or None (one replica: nothing to spread)."""
        req, C = self.request, self.cfg.clusters
        if req.replicas == 1:
            return None
        free_cpu, free_mem = self.cap_cpu - self.alloc_cpu, self.cap_mem - self.alloc_mem
        if kind == "bf1b1":
            return _best_fit_one_by_one(req, free_cpu.copy(), free_mem.copy())
        decreasing = kind == "ffd" or self.cfg.hf_compat  # the code's FFI runs FFD
        return _first_fit(req, free_cpu, free_mem, C, decreasing)

    def split_of(self, action: int) -> np.ndarray | None:
        """The request's replicas per cluster if ``action`` is taken, or None: rejected (the
        reject action, a cluster without room, a spread that does not fit)."""
        C, req = self.cfg.clusters, self.request
        if action < C:
            if not self.room()[action]:
                return None
            split = np.zeros(C)
            split[action] = req.replicas
            return split
        if action >= C + len(SPREADS):
            return None
        split = self.spread(SPREADS[action - C])
        # a spread that places fewer than R is rejected (the code places what it found)
        short = split is not None and split.sum() < req.replicas and not self.cfg.hf_compat
        return None if split is None or short or not self._fits(split) else split

    def observation(self) -> np.ndarray:
        C, req = self.cfg.clusters, self.request
        clusters = np.stack([self.alloc_cpu, self.cap_cpu, self.alloc_mem, self.cap_mem, self.delta], axis=1)
        rows = np.concatenate([clusters, -np.ones((EXTRA_ROWS, 5))])
        request = np.tile([req.replicas, req.cpu, req.mem, req.threshold, req.t_r], (C + EXTRA_ROWS, 1))
        return np.concatenate([rows, request], axis=1).astype(np.float32)

    def reset(self) -> np.ndarray:
        if not self.cfg.hf_compat:
            for _, _, req in self.running:  # the paper: an episode starts empty
                self._release(req)
            self.running = []
        self.stats, self.steps = EpisodeStats(), 0
        self.placed[:] = 0
        if not self.cfg.hf_compat:
            self.live[:] = 0
        self._draw_clusters()
        return self.observation()

    def step(self, action: int) -> tuple[np.ndarray, float, bool, dict]:
        self.steps += 1
        self.stats.offered += 1
        split = self.split_of(action)
        reward = self._place(split, action >= self.cfg.clusters) if split is not None else self._rejected()
        done = self.steps >= self.cfg.episode_steps
        if done:
            self.finished.append(self.stats.row(self._gini()))
        self._next_request()
        return self.observation(), reward, done, {}

    def _fits(self, split: np.ndarray) -> bool:
        req = self.request
        return bool(np.all((self.alloc_cpu + split * req.cpu <= self.cfg.fill * self.cap_cpu)
                           & (self.alloc_mem + split * req.mem <= self.cfg.fill * self.cap_mem)))

    def _place(self, split: np.ndarray, spread: bool) -> float:
        req, cfg = self.request, self.cfg
        req.split, req.spread = split, spread
        compat = cfg.hf_compat
        before = self.delta.copy()
        self.alloc_cpu += split * req.cpu
        self.alloc_mem += split * req.mem
        self.placed += split
        self.live += split
        if compat and spread:  # the code drifts every cluster's row, one after another, reading each before its own
            latency = 0.0
            for c in range(cfg.clusters):
                latency += self.delta[c] * split[c]
                self._drift(c, self._factor(True, up=True))
            latency /= req.replicas
        else:
            for c in np.flatnonzero(split):
                self._drift(int(c), self._factor(spread, up=True))
            # the code reads a deploy-all's latency after its drift; the paper's λ_d is the one decided on
            latency = float(((self.delta if compat else before) * split).sum() / req.replicas)
        cost = float((self.cost * split).sum() / req.replicas)
        pct = 100 * self.alloc_cpu / self.cap_cpu
        # CPU % of the chosen clusters, replica-weighted (the code sums a spread's over every cluster)
        cpu_pct = float(pct.sum() / req.replicas) if (compat and spread) else float((pct * split).sum() / req.replicas)
        self.stats.accepted += 1
        self.stats.latency.append(latency)
        self.stats.cost.append(cost)
        self.stats.cpu_pct.append(cpu_pct)
        departure = self.now if compat else self.now + req.lifetime  # the code never sets it: released next
        heapq.heappush(self.running, (departure, next(self._tie), req))
        wl, wc, wi = cfg.weights
        norm = lambda v, lo, hi: (v - lo) / (hi - lo)  # noqa: E731
        return wl * (1 - norm(latency, MIN_DELAY, MAX_DELAY)) + wc * (1 - norm(cost, MIN_COST, MAX_COST)) + \
            wi * (1 - self._gini())

    def _rejected(self) -> float:
        if self.room().any():
            return -1.0  # rejected while a cluster had room
        return 1.0 if self.cfg.hf_compat else 0.0

    def _gini(self) -> float:
        return gini(self.placed if self.cfg.hf_compat else self.live)


def _first_fit(req: Request, free_cpu: np.ndarray, free_mem: np.ndarray, C: int, decreasing: bool) -> np.ndarray:
    """Alg. 1: Δ = the fewest replicas any cluster takes (at most R − 1, to really spread); walk
    the clusters by free CPU, giving Δ where Δ fit, else one; then one more to each that fits."""
    left, out = req.replicas, np.zeros(C)
    each = np.minimum(free_cpu / req.cpu, free_mem / req.mem)
    delta = min(int(math.ceil(each.min())), req.replicas - 1)
    order = sorted(range(C), key=lambda c: free_cpu[c], reverse=decreasing)
    for c in order:
        if left == 0:
            break
        if delta < left and req.cpu * delta < free_cpu[c] and req.mem * delta < free_mem[c]:
            out[c] += delta
            left -= delta
        elif req.cpu < free_cpu[c] and req.mem < free_mem[c]:
            out[c] += 1
            left -= 1
    for c in range(C):
        if left == 0:
            break
        if req.cpu < free_cpu[c] and req.mem < free_mem[c]:
            out[c] += 1
            left -= 1
    return out


def _best_fit_one_by_one(req: Request, free_cpu: np.ndarray, free_mem: np.ndarray) -> np.ndarray:
    """Each replica to the cluster it leaves least free CPU + memory in (§6); ties to the one with
    less free CPU, then the lower index."""
    out = np.zeros(len(free_cpu))
    for _ in range(req.replicas):
        best, best_left = None, math.inf
        for c in sorted(range(len(free_cpu)), key=lambda c: free_cpu[c]):
            if free_cpu[c] >= req.cpu and free_mem[c] >= req.mem:
                left = free_cpu[c] - req.cpu + free_mem[c] - req.mem
                if left < best_left:
                    best, best_left = c, left
        if best is None:
            continue
        c = best
        out[c] += 1
        free_cpu[c] -= req.cpu
        free_mem[c] -= req.mem
    return out
