"""HephaestusForge's world (``harness.families.hephaestus.world``) for N environments at once, in numpy
arrays: what a learner steps when it wants many episodes a second.

The same world as :class:`~harness.families.hephaestus.world.MultiClusterEnv`, rule for rule — paper
semantics by default, ``hf_compat`` for the authors' code, the sites mode — with the state of
every environment in arrays (N, C) and the running requests in slots (N, K) that grow when an
environment holds more than K. Draws come from one generator for the batch, so the random
streams (not the distributions) differ from N scalar environments'. A finished episode resets
its environment at once (its last step returns the new episode's first observation), and its
measures are appended to ``finished`` as the scalar env's are.

Sequential parts stay loops, over the few clusters or replicas, never over environments: the
spread heuristics (Alg. 1, BF1B1) and the latency drift (a cluster's row and column move
together, one cluster after another).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from harness.families.hephaestus.world import (CLUSTER_TYPES, EXTRA_ROWS, MAX_COST, MAX_DELAY, MIN_COST, MIN_DELAY,
                                      SPREADS, MultiClusterConfig, Sites, c2e_services, sites_of)

_TYPES = np.array([t[1:] for t in CLUSTER_TYPES])  # (types, 3): cores, GB, cost


class MultiClusterVector:
    def __init__(self, cfg: MultiClusterConfig, n: int, seed: int | None = None, sites: Sites | None = None,
                 slots: int = 64):
        if sites is None and cfg.inventory:
            sites = sites_of(cfg.inventory)
        self.sites = sites
        self.cfg = dataclasses.replace(cfg, clusters=len(sites.names)) if sites is not None else cfg
        self.n, C = n, self.cfg.clusters
        self.rng = np.random.default_rng(seed)
        svc = c2e_services()
        self._svc = np.array([s[1:] for s in svc])  # (S, 3): cores, GB, threshold
        z = lambda *shape: np.zeros((n, *shape))  # noqa: E731
        self.cap_cpu, self.cap_mem, self.cost, self.alloc_cpu, self.alloc_mem = z(C), z(C), z(C), z(C), z(C)
        self.lat, self.placed, self.live = z(C, C), z(C), z(C)
        self.now, self.steps = z(), np.zeros(n, int)
        # the request of the moment
        self.r, self.cpu, self.mem, self.threshold, self.t_r, self.lifetime = z(), z(), z(), z(), z(), z()
        # running requests: departure (inf: a free slot), replicas per cluster, requests, spread or not
        self.dep = np.full((n, slots), np.inf)
        self.split, self.s_cpu, self.s_mem = z(slots, C), z(slots), z(slots)
        self.s_spread = np.zeros((n, slots), bool)
        # the episode's measures: offered, accepted, and sums of latency, cost, CPU %
        self.offered, self.accepted = np.zeros(n, int), np.zeros(n, int)
        self.sum_lat, self.sum_cost, self.sum_pct = z(), z(), z()
        self.finished: list[dict] = []
        self._draw_clusters(np.ones(n, bool))
        self._next_request()

    # ------------------------------------------------------------------ the world
    @property
    def delta(self) -> np.ndarray:
        return self.lat.mean(axis=2)

    def _draw_clusters(self, which: np.ndarray) -> None:
        k, C = int(which.sum()), self.cfg.clusters
        lo, hi = self.cfg.background
        if self.sites is not None:
            s = self.sites
            self.lat[which], self.cap_cpu[which], self.cap_mem[which], self.cost[which] = s.lat, s.cap_cpu, s.cap_mem, s.cost
        else:
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
        self._release_due()
        s = self._svc[self.rng.integers(len(self._svc), size=n)]
        self.cpu, self.mem, self.threshold = s[:, 0], s[:, 1], s[:, 2]
        low, high = cfg.replicas
        self.r = np.full(n, float(low)) if low == high else self.rng.integers(low, high, n).astype(float)
        self.t_r = self.lifetime if cfg.hf_compat else gap

    def _release_due(self) -> None:
        """Release every running request whose departure has passed, earliest first per env."""
        while True:
            due = self.dep < self.now[:, None]
            envs = np.flatnonzero(due.any(axis=1))
            if not len(envs):
                return
            k = np.argmin(np.where(due[envs], self.dep[envs], np.inf), axis=1)
            split = self.split[envs, k]
            self.alloc_cpu[envs] -= split * self.s_cpu[envs, k][:, None]
            self.alloc_mem[envs] -= split * self.s_mem[envs, k][:, None]
            self.live[envs] -= split
            self._drift_where(envs, split > 0, self._factor(envs, self.s_spread[envs, k], up=False))
            self.dep[envs, k] = np.inf

    def _factor(self, envs: np.ndarray, spread: np.ndarray, up: bool) -> np.ndarray:
        """(len(envs), C) drift factors."""
        C = self.cfg.clusters
        if self.cfg.hf_compat:
            f = np.where(spread, 1.05, 1.15) if up else np.where(spread, 1.10, 1.15)
            f = np.repeat(f[:, None], C, axis=1)
        else:
            f = self.rng.uniform(1.0, 1.15, (len(envs), C))
        return f if up else 1 / f

    def _drift_where(self, envs: np.ndarray, which: np.ndarray, factor: np.ndarray) -> None:
        """Drift cluster c's row and column by ``factor[:, c]`` where ``which[:, c]``, one cluster
        after another (the scalar env's order)."""
        if self.sites is not None:
            return  # a testbed's RTTs do not drift
        for c in range(self.cfg.clusters):
            m = which[:, c]
            if not m.any():
                continue
            e = envs[m]
            row = np.clip(self.lat[e, c] * factor[m, c][:, None], MIN_DELAY, MAX_DELAY)
            row[:, c] = 0.0
            self.lat[e, c], self.lat[e, :, c] = row, row

    # ------------------------------------------------------------------ decisions
    def room(self) -> np.ndarray:
        """(N, C) whether each cluster takes all R of the request."""
        f = self.cfg.fill
        return ((self.alloc_cpu + (self.r * self.cpu)[:, None] <= f * self.cap_cpu)
                & (self.alloc_mem + (self.r * self.mem)[:, None] <= f * self.cap_mem))

    def action_masks(self) -> np.ndarray:
        return np.concatenate([self.room(), np.ones((self.n, EXTRA_ROWS), bool)], axis=1)

    def observation(self) -> np.ndarray:
        n, C = self.n, self.cfg.clusters
        clusters = np.stack([self.alloc_cpu, self.cap_cpu, self.alloc_mem, self.cap_mem, self.delta], axis=2)
        rows = np.concatenate([clusters, -np.ones((n, EXTRA_ROWS, 5))], axis=1)
        request = np.stack([self.r, self.cpu, self.mem, self.threshold, self.t_r], axis=1)
        return np.concatenate([rows, np.repeat(request[:, None], C + EXTRA_ROWS, axis=1)], axis=2).astype(np.float32)

    def reset(self) -> np.ndarray:
        self._reset(np.ones(self.n, bool))
        return self.observation()

    def _reset(self, which: np.ndarray) -> None:
        if not self.cfg.hf_compat:  # the paper: an episode starts empty
            self.dep[which] = np.inf
            self.live[which] = 0
        self.offered[which], self.accepted[which], self.steps[which] = 0, 0, 0
        self.sum_lat[which], self.sum_cost[which], self.sum_pct[which] = 0, 0, 0
        self.placed[which] = 0
        self._draw_clusters(which)

    def split_of(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(replicas per cluster (N, C), placed or not (N,)) for each env's action."""
        n, C = self.n, self.cfg.clusters
        a = np.asarray(actions)
        split = np.zeros((n, C))
        deploy = a < C
        ok = np.zeros(n, bool)
        idx = np.flatnonzero(deploy)
        ok[idx] = self.room()[idx, a[idx]]
        split[idx[ok[idx]], a[idx[ok[idx]]]] = self.r[idx[ok[idx]]]
        for j, kind in enumerate(SPREADS):
            e = np.flatnonzero((a == C + j) & (self.r > 1))
            if not len(e):
                continue
            if kind == "bf1b1":
                s = self._best_fit_one_by_one(e)
            else:
                s = self._first_fit(e, decreasing=kind == "ffd" or self.cfg.hf_compat)
            short = (s.sum(axis=1) < self.r[e]) & (not self.cfg.hf_compat)
            f = self.cfg.fill
            fits = ((self.alloc_cpu[e] + s * self.cpu[e, None] <= f * self.cap_cpu[e])
                    & (self.alloc_mem[e] + s * self.mem[e, None] <= f * self.cap_mem[e])).all(axis=1)
            good = ~short & fits
            split[e[good]] = s[good]
            ok[e[good]] = True
        return split, ok

    def _first_fit(self, e: np.ndarray, decreasing: bool) -> np.ndarray:
        """Alg. 1 for the envs ``e`` (``multicluster._first_fit``, vectorised over envs)."""
        C = self.cfg.clusters
        cpu, mem, r = self.cpu[e], self.mem[e], self.r[e]
        free_cpu, free_mem = self.cap_cpu[e] - self.alloc_cpu[e], self.cap_mem[e] - self.alloc_mem[e]
        each = np.minimum(free_cpu / cpu[:, None], free_mem / mem[:, None])
        delta = np.minimum(np.ceil(each.min(axis=1)), r - 1)
        order = np.argsort(-free_cpu if decreasing else free_cpu, axis=1, kind="stable")
        out, left, rows = np.zeros((len(e), C)), r.copy(), np.arange(len(e))
        for j in range(C):
            c = order[:, j]
            fc, fm = free_cpu[rows, c], free_mem[rows, c]
            live = left > 0
            chunk = live & (delta < left) & (cpu * delta < fc) & (mem * delta < fm)
            one = live & ~chunk & (cpu < fc) & (mem < fm)
            add = np.where(chunk, delta, np.where(one, 1.0, 0.0))
            out[rows, c] += add
            left -= add
        for c in range(C):
            one = (left > 0) & (cpu < free_cpu[:, c]) & (mem < free_mem[:, c])
            out[one, c] += 1
            left -= one
        return out

    def _best_fit_one_by_one(self, e: np.ndarray) -> np.ndarray:
        """BF1B1 for the envs ``e`` (``multicluster._best_fit_one_by_one``, vectorised over envs)."""
        C = self.cfg.clusters
        cpu, mem, r = self.cpu[e], self.mem[e], self.r[e]
        free_cpu, free_mem = self.cap_cpu[e] - self.alloc_cpu[e], self.cap_mem[e] - self.alloc_mem[e]
        out, rows = np.zeros((len(e), C)), np.arange(len(e))
        for i in range(int(r.max())):
            active = i < r
            order = np.argsort(free_cpu, axis=1, kind="stable")
            best, best_left = np.full(len(e), -1), np.full(len(e), np.inf)
            for j in range(C):
                c = order[:, j]
                fc, fm = free_cpu[rows, c], free_mem[rows, c]
                left = fc - cpu + fm - mem
                better = active & (fc >= cpu) & (fm >= mem) & (left < best_left)
                best, best_left = np.where(better, c, best), np.where(better, left, best_left)
            got = np.flatnonzero(best >= 0)
            out[got, best[got]] += 1
            free_cpu[got, best[got]] -= cpu[got]
            free_mem[got, best[got]] -= mem[got]
        return out

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict]:
        """(observation, reward, done, {}) for every env; a finished env starts its next episode."""
        cfg, C = self.cfg, self.cfg.clusters
        a = np.asarray(actions)
        self.steps += 1
        self.offered += 1
        split, ok = self.split_of(a)
        reward = np.where(self.room().any(axis=1), -1.0, 1.0 if cfg.hf_compat else 0.0)
        acc = np.flatnonzero(ok)
        if len(acc):
            reward[acc] = self._place(acc, split[acc], a[acc] >= C)
        done = self.steps >= cfg.episode_steps
        for i in np.flatnonzero(done):
            count = max(1, self.accepted[i])
            mean = (lambda s: s / count) if self.accepted[i] else (lambda s: float("nan"))  # noqa: E731
            self.finished.append({"rejection": 1 - self.accepted[i] / max(1, self.offered[i]),
                                  "cost": mean(self.sum_cost[i]), "latency": mean(self.sum_lat[i]),
                                  "cpu_pct": mean(self.sum_pct[i]), "gini": float(self._gini()[i])})
        self._next_request()
        if done.any():
            self._reset(done)
        return self.observation(), reward, done, {}

    def _place(self, e: np.ndarray, split: np.ndarray, spread: np.ndarray) -> np.ndarray:
        cfg, C = self.cfg, self.cfg.clusters
        compat = cfg.hf_compat
        r, cpu, mem = self.r[e], self.cpu[e], self.mem[e]
        before = self.delta[e]
        self.alloc_cpu[e] += split * cpu[:, None]
        self.alloc_mem[e] += split * mem[:, None]
        self.placed[e] += split
        self.live[e] += split
        latency = np.zeros(len(e))
        up = self._factor(e, spread, up=True)
        if compat:  # the code drifts every cluster of a spread, reading each δ before its own drift
            sp = np.flatnonzero(spread)
            for c in range(C):
                latency[sp] += self.delta[e[sp], c] * split[sp, c]
                self._drift_where(e[sp], np.eye(C, dtype=bool)[np.full(len(sp), c)], up[sp])
            latency[sp] /= r[sp]
            whole = np.flatnonzero(~spread)
            self._drift_where(e[whole], split[whole] > 0, up[whole])
            latency[whole] = (self.delta[e[whole]] * split[whole]).sum(axis=1) / r[whole]
        else:
            self._drift_where(e, split > 0, up)
            latency = (before * split).sum(axis=1) / r
        cost = (self.cost[e] * split).sum(axis=1) / r
        pct = 100 * self.alloc_cpu[e] / self.cap_cpu[e]
        cpu_pct = np.where(compat & spread, pct.sum(axis=1), (pct * split).sum(axis=1)) / r
        self.accepted[e] += 1
        self.sum_lat[e] += latency
        self.sum_cost[e] += cost
        self.sum_pct[e] += cpu_pct
        self._hold(e, split, self.now[e] if compat else self.now[e] + self.lifetime[e], spread)
        wl, wc, wi = cfg.weights
        norm = lambda v, lo, hi: (v - lo) / (hi - lo)  # noqa: E731
        return wl * (1 - norm(latency, MIN_DELAY, MAX_DELAY)) + wc * (1 - norm(cost, MIN_COST, MAX_COST)) + \
            wi * (1 - self._gini()[e])

    def _hold(self, e: np.ndarray, split: np.ndarray, departure: np.ndarray, spread: np.ndarray) -> None:
        """Put each placed request in a free slot of its env (the slots grow when one is full)."""
        free = np.isinf(self.dep[e])
        if not free.any(axis=1).all():
            self._grow()
            free = np.isinf(self.dep[e])
        k = np.argmax(free, axis=1)
        self.dep[e, k], self.split[e, k], self.s_spread[e, k] = departure, split, spread
        self.s_cpu[e, k], self.s_mem[e, k] = self.cpu[e], self.mem[e]

    def _grow(self) -> None:
        K = self.dep.shape[1]
        self.dep = np.concatenate([self.dep, np.full((self.n, K), np.inf)], axis=1)
        self.split = np.concatenate([self.split, np.zeros_like(self.split)], axis=1)
        self.s_cpu = np.concatenate([self.s_cpu, np.zeros_like(self.s_cpu)], axis=1)
        self.s_mem = np.concatenate([self.s_mem, np.zeros_like(self.s_mem)], axis=1)
        self.s_spread = np.concatenate([self.s_spread, np.zeros_like(self.s_spread)], axis=1)

    def _gini(self) -> np.ndarray:
        loads = self.placed if self.cfg.hf_compat else self.live
        C = self.cfg.clusters
        mean = loads.mean(axis=1)
        diff = np.abs(loads[:, :, None] - loads[:, None, :]).sum(axis=(1, 2))
        return np.divide(diff, 2 * C * C * mean, out=np.zeros(self.n), where=mean > 0)

