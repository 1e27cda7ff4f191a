"""HephaestusForge's world (``harness.families.hephaestus.world``) for N environments at once: the
one engine of the world, a learner's when it wants many episodes a second, and the step-by-step
env's as a batch of one.

The state of every environment is in arrays (N, C), the running requests in slots (N, K) that grow
when an environment holds more than K; a step (``advance``) is the compiled rules of
``harness.families.hephaestus.rules`` in one order: the action decided, the request placed or
rejected, the episode's end noted, the next request arriving and the due ones leaving. The vector
form (``step``) starts a finished episode's next at once (its last step returns the new episode's
first observation) and appends its measures to ``finished`` as the scalar env does.

The random draws are made here, from one generator for the batch, in the order the rules use
them; N environments' streams (not their distributions) differ from N step-by-step envs'.
``dense_draws=False`` draws as the step-by-step env does: a drift factor only for a cluster that
drifts, and the running requests released one by one, their drift drawn, when an episode starts
(``rules`` says more).
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np

from harness.families.hephaestus import rules
from harness.families.hephaestus.config import (CLUSTER_TYPES, EXTRA_ROWS, FEATURES, MAX_DELAY, MIN_DELAY, SPREADS,
                                                MultiClusterConfig, Sites, c2e_services, sites_of)

_TYPES = np.array([t[1:] for t in CLUSTER_TYPES])  # (types, 3): cores, GB, cost
_NO_DRAWS = np.empty(0)


class Step(NamedTuple):
    """What one ``advance`` did, before any episode restarts."""

    reward: np.ndarray  # (N,)
    done: np.ndarray  # (N,) the episode ended with this step
    accepted: np.ndarray  # the environments whose request was placed, and of their requests:
    latency: np.ndarray  # λ_d
    cost: np.ndarray  # per replica
    cpu_pct: np.ndarray  # the chosen clusters' CPU %
    gini: np.ndarray  # of each ended episode (in the order of ``np.flatnonzero(done)``) at its end


class MultiClusterVector:
    def __init__(self, cfg: MultiClusterConfig, n: int, seed: int | None = None, sites: Sites | None = None,
                 slots: int = 64, dense_draws: bool = True):
        if sites is None and cfg.inventory:
            sites = sites_of(cfg.inventory)
        self.sites = sites
        self.cfg = dataclasses.replace(cfg, clusters=len(sites.names)) if sites is not None else cfg
        self.n, C = n, self.cfg.clusters
        self.rng = np.random.default_rng(seed)
        self.dense = dense_draws
        svc = c2e_services()
        self._svc_cpu, self._svc_mem, self._svc_threshold = (np.array([s[k] for s in svc]) for k in (1, 2, 3))
        z = lambda *shape: np.zeros((n, *shape))  # noqa: E731
        self.cap_cpu, self.cap_mem, self.cost, self.alloc_cpu, self.alloc_mem = z(C), z(C), z(C), z(C), z(C)
        self.lat, self.placed, self.live = z(C, C), z(C), z(C)
        self.now, self.steps = z(), np.zeros(n, np.int64)
        # the request of the moment (svc: its Cloud2Edge service)
        self.r, self.cpu, self.mem, self.threshold, self.t_r, self.lifetime = z(), z(), z(), z(), z(), z()
        self.svc = np.zeros(n, np.int64)
        # running requests: departure (inf: a free slot), replicas per cluster, requests, spread or not
        self.dep = np.full((n, slots), np.inf)
        self.split, self.s_cpu, self.s_mem = z(slots, C), z(slots), z(slots)
        self.s_spread = np.zeros((n, slots), bool)
        # the vector form's episode measures: offered, accepted, and sums of latency, cost, CPU %
        self.offered, self.accepted = np.zeros(n, np.int64), np.zeros(n, np.int64)
        self.sum_lat, self.sum_cost, self.sum_pct = z(), z(), z()
        self.finished: list[dict] = []
        self._draw_clusters(np.ones(n, bool))
        self._next_request()

    # ------------------------------------------------------------------ the state, as the rules take it
    @property
    def _cl(self) -> tuple:
        return self.cap_cpu, self.cap_mem, self.cost, self.alloc_cpu, self.alloc_mem, self.placed, self.live, self.lat

    @property
    def _rq(self) -> tuple:
        return self.r, self.cpu, self.mem, self.threshold, self.t_r

    @property
    def _sl(self) -> tuple:
        return self.dep, self.split, self.s_cpu, self.s_mem, self.s_spread

    @property
    def delta(self) -> np.ndarray:
        out = np.empty(self.cap_cpu.shape)
        rules.delta(self.lat, out)
        return out

    # ------------------------------------------------------------------ the world's draws
    def _draw_clusters(self, which: np.ndarray) -> None:
        """New clusters for the envs ``which``: Table 4's types and random latencies, or the sites; a
        random background allocation either way."""
        k, C = int(which.sum()), self.cfg.clusters
        lo, hi = self.cfg.background
        if self.sites is not None:
            s = self.sites
            self.lat[which], self.cap_cpu[which], self.cap_mem[which], self.cost[which] = s.lat, s.cap_cpu, s.cap_mem, s.cost
        else:
            # each ordered pair drawn apart (as the code does: the matrix is not symmetric until drift)
            lat = self.rng.integers(int(MIN_DELAY), int(MAX_DELAY), size=(k, C, C)).astype(float)
            lat[:, np.arange(C), np.arange(C)] = 0.0
            t = _TYPES[self.rng.integers(0, len(CLUSTER_TYPES), size=(k, C))]
            self.lat[which], self.cap_cpu[which], self.cap_mem[which], self.cost[which] = lat, t[..., 0], t[..., 1], t[..., 2]
        self.alloc_cpu[which] = self.rng.uniform(lo, hi, (k, C))
        self.alloc_mem[which] = self.rng.uniform(lo, hi, (k, C))

    def _next_request(self) -> None:
        cfg, n = self.cfg, self.n
        gap = self.rng.exponential(1 / cfg.arrival_rate, n)
        self.lifetime = self.rng.exponential(cfg.mean_lifetime, n)
        self.now += gap
        self._release_before(self.now)
        self.svc = self.rng.integers(len(self._svc_cpu), size=n)
        self.cpu, self.mem, self.threshold = self._svc_cpu[self.svc], self._svc_mem[self.svc], self._svc_threshold[self.svc]
        low, high = cfg.replicas
        self.r = np.full(n, float(low)) if low == high else self.rng.integers(low, high, n).astype(float)
        self.t_r = self.lifetime if cfg.hf_compat else gap

    def _drift_draws(self, requests: int, drifting: int) -> np.ndarray:
        """The paper's drift factors for ``requests`` requests arriving or leaving, ``drifting``
        clusters in all, in the order the rules use them (``rules`` says which stream draws which);
        the code's are fixed."""
        if self.cfg.hf_compat:
            return _NO_DRAWS
        return self.rng.uniform(1.0, 1.15, requests * self.cfg.clusters if self.dense else drifting)

    def _release_before(self, limit: np.ndarray) -> None:
        """Release every running request whose departure is before ``limit`` (N,)."""
        envs, slots, drifting = rules.due(self.dep, self.split, limit)
        if len(envs):
            rules.release(envs, slots, self._drift_draws(len(envs), drifting), self.dense, self._cl, self._sl,
                          self.cfg.hf_compat, self.sites is None)

    # ------------------------------------------------------------------ decisions
    def action_masks(self) -> np.ndarray:
        out = np.empty((self.n, self.cfg.clusters + EXTRA_ROWS), bool)
        rules.masks(self._cl, self._rq, self.cfg.fill, out)
        return out

    def room(self) -> np.ndarray:
        """(N, C) whether each cluster takes all R of the request."""
        return self.action_masks()[:, :self.cfg.clusters]

    def observation(self) -> np.ndarray:
        out = np.empty((self.n, self.cfg.clusters + EXTRA_ROWS, FEATURES), np.float32)
        rules.observe(self._cl, self._rq, out)
        return out

    def spread(self, kind: str) -> np.ndarray:
        """(N, C) each env's request's replicas per cluster by a spread heuristic (``SPREADS``)."""
        out = np.zeros((self.n, self.cfg.clusters))
        rules.spread(SPREADS.index(kind), self._cl, self._rq, self.cfg.hf_compat, out)
        return out

    def _decide(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        split, ok, reward = np.zeros((self.n, self.cfg.clusters)), np.zeros(self.n, bool), np.empty(self.n)
        rules.decide(actions, self._cl, self._rq, self.cfg.fill, self.cfg.hf_compat, split, ok, reward)
        return split, ok, reward

    def split_of(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(replicas per cluster (N, C), placed or not (N,)) for each env's action."""
        split, ok, _ = self._decide(np.ascontiguousarray(actions, dtype=np.int64))
        return split, ok

    # ------------------------------------------------------------------ steps and episodes
    def advance(self, actions: np.ndarray) -> Step:
        """Every env takes its action and the next request arrives; an ended episode is not restarted."""
        cfg = self.cfg
        a = np.ascontiguousarray(actions, dtype=np.int64)
        self.steps += 1
        split, ok, reward = self._decide(a)
        acc = np.flatnonzero(ok)
        latency, cost, cpu_pct = np.empty(len(acc)), np.empty(len(acc)), np.empty(len(acc))
        if len(acc):
            u = self._drift_draws(len(acc), np.count_nonzero(split))
            rules.place(acc, split, a, u, self.dense, self._cl, self._rq, cfg.hf_compat, self.sites is None,
                        cfg.weights, latency, cost, cpu_pct, reward)
            while not rules.hold(acc, split, a, self.now, self.lifetime, self._rq, self._sl, cfg.hf_compat):
                self._grow()  # an env's slots are all taken
        done = self.steps >= cfg.episode_steps
        ended = np.flatnonzero(done)
        gini = np.empty(len(ended))
        rules.gini(self.placed if cfg.hf_compat else self.live, ended, gini)
        self._next_request()
        return Step(reward, done, acc, latency, cost, cpu_pct, gini)

    def start(self, which: np.ndarray) -> None:
        """New episodes in the envs ``which``: clusters drawn anew, nothing placed; in the paper's
        world nothing running either (the code's carries a running request over)."""
        if not self.cfg.hf_compat:
            if not self.dense:  # the step-by-step env's stream: they leave one by one, drawing their drift
                self._release_before(np.where(which, np.inf, -np.inf))
            self.dep[which] = np.inf
            self.live[which] = 0
        self.offered[which], self.accepted[which], self.steps[which] = 0, 0, 0
        self.sum_lat[which], self.sum_cost[which], self.sum_pct[which] = 0, 0, 0
        self.placed[which] = 0
        self._draw_clusters(which)

    def reset(self) -> np.ndarray:
        self.start(np.ones(self.n, bool))
        return self.observation()

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict]:
        """(observation, reward, done, {}) for every env; a finished env starts its next episode."""
        out = self.advance(actions)
        acc = out.accepted
        self.offered += 1
        self.accepted[acc] += 1
        self.sum_lat[acc] += out.latency
        self.sum_cost[acc] += out.cost
        self.sum_pct[acc] += out.cpu_pct
        for i, inequality in zip(np.flatnonzero(out.done), out.gini):
            count = self.accepted[i]
            mean = (lambda s: s / count) if count else (lambda s: float("nan"))  # noqa: E731
            self.finished.append(rules.episode_row(self.offered[i], count, mean(self.sum_lat[i]),
                                                   mean(self.sum_cost[i]), mean(self.sum_pct[i]), float(inequality)))
        if out.done.any():
            self.start(out.done)
        return self.observation(), out.reward, out.done, {}

    def _grow(self) -> None:
        """Twice the slots for every env."""
        K = self.dep.shape[1]
        self.dep = np.concatenate([self.dep, np.full((self.n, K), np.inf)], axis=1)
        self.split = np.concatenate([self.split, np.zeros_like(self.split)], axis=1)
        self.s_cpu = np.concatenate([self.s_cpu, np.zeros_like(self.s_cpu)], axis=1)
        self.s_mem = np.concatenate([self.s_mem, np.zeros_like(self.s_mem)], axis=1)
        self.s_spread = np.concatenate([self.s_spread, np.zeros_like(self.s_spread)], axis=1)
