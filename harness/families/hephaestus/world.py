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

Written once (``rules``: the rules over N environments; ``world_vector``: their state and step),
they run here as a batch of one, one step at a time; ``config`` holds the settings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from harness.families.hephaestus import rules
from harness.families.hephaestus.config import (CLUSTER_TYPES, EXTRA_ROWS, FEATURES, MAX_COST, MAX_DELAY, MIN_COST,
                                                MIN_DELAY, OBJECTIVES, SPREADS, MultiClusterConfig, Sites,
                                                c2e_services, sites_of)
from harness.families.hephaestus.world_vector import MultiClusterVector

__all__ = ["CLUSTER_TYPES", "EXTRA_ROWS", "FEATURES", "MAX_COST", "MAX_DELAY", "MIN_COST", "MIN_DELAY", "OBJECTIVES",
           "SPREADS", "EpisodeStats", "MultiClusterConfig", "MultiClusterEnv", "Request", "Sites", "c2e_services",
           "gini", "sites_of"]


@dataclass
class Request:
    service: str
    replicas: int
    cpu: float
    mem: float
    threshold: float
    t_r: float
    lifetime: float


@dataclass
class EpisodeStats:
    """The episode so far, averaged at its end as the authors' logs are."""

    offered: int = 0
    accepted: int = 0
    latency: list[float] = field(default_factory=list)
    cost: list[float] = field(default_factory=list)
    cpu_pct: list[float] = field(default_factory=list)

    def row(self, inequality: float) -> dict:
        mean = lambda xs: float(np.mean(xs)) if xs else math.nan  # noqa: E731
        return rules.episode_row(self.offered, self.accepted, mean(self.latency), mean(self.cost),
                                 mean(self.cpu_pct), inequality)


def gini(loads: np.ndarray) -> float:
    """Σ_i Σ_j |L_i − L_j| / (2 n² L̄) (eq. 10); 0 when nothing is placed."""
    out = np.empty(1)
    rules.gini(np.ascontiguousarray(loads, dtype=float)[None], np.zeros(1, np.int64), out)
    return float(out[0])


def _one(name: str) -> property:
    """The world's array ``name`` of the one environment: a view (writing into it writes the
    world); assigning copies into it."""
    return property(lambda self: getattr(self.batch, name)[0],
                    lambda self, value: getattr(self.batch, name).__setitem__(0, value))


class MultiClusterEnv:
    """One environment (Gymnasium's reset/step, action_masks): a batch of one of the world
    (``MultiClusterVector``), drawing as it always has, its episodes restarted by ``reset``.
    ``stats`` holds the episode's measures and ``finished`` every finished episode's row."""

    cap_cpu, cap_mem, cost, lat = _one("cap_cpu"), _one("cap_mem"), _one("cost"), _one("lat")
    alloc_cpu, alloc_mem = _one("alloc_cpu"), _one("alloc_mem")
    placed = _one("placed")  # the episode's replicas per cluster (the code's Gini)
    live = _one("live")  # replicas running per cluster (the paper's Gini)

    def __init__(self, cfg: MultiClusterConfig | None = None, seed: int | None = None, sites: Sites | None = None):
        self.batch = MultiClusterVector(cfg or MultiClusterConfig(), 1, seed=seed, sites=sites, dense_draws=False)
        self.cfg, self.sites = self.batch.cfg, self.batch.sites
        self.services = c2e_services()
        self.stats = EpisodeStats()
        self.finished: list[dict] = []
        self._request: Request | None = None

    @property
    def rng(self) -> np.random.Generator:
        """The world's generator (a policy that draws from it draws from the world's stream)."""
        return self.batch.rng

    @rng.setter
    def rng(self, rng: np.random.Generator) -> None:
        self.batch.rng = rng

    @property
    def now(self) -> float:
        return float(self.batch.now[0])

    @property
    def steps(self) -> int:
        return int(self.batch.steps[0])

    @property
    def delta(self) -> np.ndarray:
        """δ_c: the mean of cluster c's latency row (its own 0 included, as the code computes it)."""
        return self.batch.delta[0]

    @property
    def request(self) -> Request:
        if self._request is None:
            b = self.batch
            self._request = Request(self.services[b.svc[0]][0], int(b.r[0]), float(b.cpu[0]), float(b.mem[0]),
                                    float(b.threshold[0]), float(b.t_r[0]), float(b.lifetime[0]))
        return self._request

    @request.setter
    def request(self, req: Request) -> None:
        b = self.batch
        b.r, b.cpu, b.mem, b.threshold, b.t_r, b.lifetime = (np.array([v], float) for v in (
            req.replicas, req.cpu, req.mem, req.threshold, req.t_r, req.lifetime))
        self._request = req

    # ------------------------------------------------------------------ decisions
    def room(self) -> np.ndarray:
        """(C,) whether each cluster takes all R replicas of the request."""
        return self.action_masks()[:self.cfg.clusters]

    def action_masks(self) -> np.ndarray:
        return self.batch.action_masks()[0]

    def spread(self, kind: str) -> np.ndarray | None:
        """Replicas per cluster by a spread heuristic, or None (one replica: nothing to spread)."""
        return None if self.batch.r[0] == 1 else self.batch.spread(kind)[0]

    def split_of(self, action: int) -> np.ndarray | None:
        """The request's replicas per cluster if ``action`` is taken, or None: rejected (the
        reject action, a cluster without room, a spread that does not fit)."""
        split, ok = self.batch.split_of(np.array([action]))
        return split[0] if ok[0] else None

    def observation(self) -> np.ndarray:
        return self.batch.observation()[0]

    # ------------------------------------------------------------------ episodes
    def reset(self) -> np.ndarray:
        self.batch.start(np.ones(1, bool))
        self.stats = EpisodeStats()
        return self.observation()

    def step(self, action: int) -> tuple[np.ndarray, float, bool, dict]:
        out = self.batch.advance(np.array([action]))
        self._request = None  # the next one has arrived
        self.stats.offered += 1
        if len(out.accepted):
            self.stats.accepted += 1
            self.stats.latency.append(float(out.latency[0]))
            self.stats.cost.append(float(out.cost[0]))
            self.stats.cpu_pct.append(float(out.cpu_pct[0]))
        done = bool(out.done[0])
        if done:
            self.finished.append(self.stats.row(float(out.gini[0])))
        return self.observation(), float(out.reward[0]), done, {}
