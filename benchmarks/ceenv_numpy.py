"""CEEnv and REACH's latency model as they were before compilation (numpy, a Python loop per
environment; harness at commit 0223ae7), kept only as the speed reference of
benchmarks.ceenv_speed. The library's compiled version (harness.sim.ceenv_kernels,
harness.sim.latency_kernel) replaced them; the benchmark also checks both give the same latency.
"""

from __future__ import annotations

import numpy as np

from harness.sim import kube_scheduler
from harness.sim.ceenv import Batch, CEEnvVector, Dynamics


def numpy_terms(self, X: np.ndarray, partial: bool = False, E: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """All the model's terms for a batch X (B, S, N); every service needs ≥ 1 replica, unless
    ``partial``: then a service without replicas counts as absent (no execution time, no call
    delay, no gateway delay), the cost of a placement being built pod by pod. ``E``: time per
    (service, node) other than the profile's execution time (S, N) or (B, S, N) — the
    queueing model's sojourn times (sim.queueing)."""
    X = np.asarray(X, dtype=float)
    if X.ndim == 2:
        X = X[None]
    count = X.sum(axis=2)  # (B, S)

    def per(total, n):
        return np.divide(total, n, out=np.zeros_like(total), where=n > 0) if partial else total / n
    if E is None:
        T_E = per((X * self.E[None]).sum(axis=2), count)
    else:  # an overloaded node's time is infinite; where no pod runs it does not count
        with np.errstate(invalid="ignore"):
            T_E = per(np.where(X > 0, X * (E[None] if E.ndim == 2 else E), 0.0).sum(axis=2), count)
    D_S = {}
    for i, j in self.edges:  # eqs. 3-4 only where a call exists
        D_S[(i, j)] = per(np.einsum("bn,nm,bm->b", X[:, i], self.D, X[:, j]), count[:, i] * count[:, j])
    T_S = np.zeros_like(T_E)
    for i in self.order:
        best = np.zeros(X.shape[0])
        for callees, w in self.groups[i]:
            T_G = sum(wk * (D_S[(i, int(j))] + T_S[:, int(j)]) for j, wk in zip(callees, w))
            best = np.maximum(best, T_G)
        T_S[:, i] = T_E[:, i] + best
    D_gw = sum(per((X[:, g] * self.topo.user_rtt[None]).sum(axis=1), count[:, g]) for g in self.entries) / len(self.entries)
    D_msa = D_gw + sum(T_S[:, g] for g in self.entries) / len(self.entries)
    return {"T_E": T_E, "T_S": T_S, "D_S": D_S, "D_gateway": D_gw, "D_msa": D_msa}


class NumpyDynamics(Dynamics):
    """Dynamics with the numpy rules of commit 0223ae7."""

    def __init__(self, model, cfg):
        super().__init__(model, cfg)
        # 0223ae7 skipped the constraint filters for an app without constraints
        self.constrained = bool((~self.affinity).any() or self.spread.any())

    # -------------------------------------------------------------- derived state
    def counts(self, node: np.ndarray) -> np.ndarray:
        B = node.shape[0]
        X = np.zeros((B, self.S, self.N))
        b, p = np.nonzero(node >= 0)
        np.add.at(X, (b, self.slot_service[p], node[b, p]), 1)
        return X

    def used(self, st: Batch) -> tuple[np.ndarray, np.ndarray]:
        B = st.node.shape[0]
        cpu, mem = st.bg_cpu.copy(), st.bg_mem.copy()
        b, p = np.nonzero(st.node >= 0)
        np.add.at(cpu, (b, st.node[b, p]), self.r_cpu[p])
        np.add.at(mem, (b, st.node[b, p]), self.r_mem[p])
        return cpu, mem

    def room(self, st: Batch, b: int, slot: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Nodes of environment b that are up and can take slot's pod; and their CPU/memory in use."""
        cpu, mem = st.bg_cpu[b].copy(), st.bg_mem[b].copy()
        on = st.node[b] >= 0
        np.add.at(cpu, st.node[b][on], self.r_cpu[on])
        np.add.at(mem, st.node[b][on], self.r_mem[on])
        ok = kube_scheduler.fits(st.up[b], self.C_cpu, self.C_mem, cpu, mem, self.r_cpu[slot], self.r_mem[slot])
        return ok & self.allowed(st, b, slot), cpu, mem

    def allowed(self, st: Batch, b: int, slot: int) -> np.ndarray:
        """(N,) nodes slot's constraints permit (anti-affinity: none holding another pod of its service)."""
        ok = self.affinity[slot].copy()
        if self.spread[slot]:
            same = (self.slot_service == self.slot_service[slot]) & (st.node[b] >= 0)
            same[slot] = False
            ok[st.node[b][same]] = False
        return ok

    def place_default(self, st: Batch, b: int, slot: int) -> int | None:
        """Where Kubernetes' default scheduler puts slot's pod (None: nowhere fits); written to ``st``."""
        _, cpu, mem = self.room(st, b, slot)
        same = self.slot_service == self.slot_service[slot]
        peers = np.bincount(st.node[b][same & (st.node[b] >= 0)], minlength=self.N)
        node = kube_scheduler.default_choice(st.up[b], self.C_cpu, self.C_mem, cpu, mem, self.r_cpu[slot],
                                             self.r_mem[slot], peers, allowed=self.allowed(st, b, slot))
        if node is not None:
            st.node[b, slot] = node
        return node

    def latency(self, st: Batch) -> np.ndarray:
        return numpy_terms(self.model, self.counts(st.node))["D_msa"]

    def masks(self, st: Batch) -> np.ndarray:
        cpu, mem = self.used(st)
        free_cpu, free_mem = self.C_cpu - cpu, self.C_mem - mem  # (B, N)
        fits = (free_cpu[:, None, :] >= self.r_cpu[None, :, None] - 1e-9) & \
               (free_mem[:, None, :] >= self.r_mem[None, :, None] - 1e-9)  # (B, P, N)
        occupied = st.node >= 0
        same = st.node[:, :, None] == np.arange(self.N)[None, None, :]
        ok = fits & occupied[:, :, None] & ~same & st.up[:, None, :]
        if self.constrained:  # node_affinity, and pod_antiaffinity: no node holding another pod of the service
            others = self.counts(st.node)[:, self.slot_service, :] - same  # (B, P, N)
            ok &= self.affinity[None] & ~(self.spread[None, :, None] & (others > 0))
        B = st.node.shape[0]
        return np.concatenate([ok.reshape(B, -1), np.ones((B, 1), bool)], axis=1)

    def observe(self, st: Batch) -> np.ndarray:
        cpu, mem = self.used(st)
        B = st.node.shape[0]
        occupied = (st.node >= 0).astype(np.float32)
        onehot = np.zeros((B, self.P, self.N), np.float32)
        b, p = np.nonzero(st.node >= 0)
        onehot[b, p, st.node[b, p]] = 1
        per_slot = np.concatenate([occupied[..., None], (occupied * self.r_cpu)[..., None],
                                   (occupied * self.r_mem / 1024)[..., None], onehot], axis=2)
        nodes = np.concatenate([(self.C_cpu - cpu) / self.C_cpu, (self.C_mem - mem) / self.C_mem,
                                np.broadcast_to(self.C_cpu / self.C_cpu.max(), (B, self.N)),
                                np.broadcast_to(self.C_mem / self.C_mem.max(), (B, self.N)), st.up], axis=1)
        return np.concatenate([nodes, per_slot.reshape(B, -1), st.latency[:, None] / 1000], axis=1).astype(np.float32)

    # -------------------------------------------------------------- episodes
    def place_randomly(self, st: Batch, b: int, slots: np.ndarray, rng: np.random.Generator) -> None:
        for p in slots:
            choices = np.flatnonzero(self.room(st, b, p)[0])
            st.node[b, p] = rng.choice(choices) if len(choices) else -1

    def reset_one(self, st: Batch, b: int, rng: np.random.Generator, replicas: np.ndarray | None = None) -> None:
        cfg = self.cfg
        lo, hi = cfg.utilisation
        st.bg_cpu[b] = rng.uniform(lo, hi, self.N) * self.C_cpu
        st.bg_mem[b] = rng.uniform(lo, hi, self.N) * self.C_mem
        st.up[b] = True
        if cfg.failed_at_start and rng.random() < cfg.failed_at_start:
            k = rng.integers(1, min(cfg.max_failed_at_start, self.N - 1) + 1)
            st.up[b, rng.choice(self.N, k, replace=False)] = False
        st.node[b] = -1
        st.steps[b] = 0
        st.fail_at[b] = rng.integers(1, cfg.max_steps) if rng.random() < cfg.node_failure_prob else -1
        if replicas is not None:
            reps = replicas
        elif cfg.large_share and rng.random() < cfg.large_share:
            reps = np.full(self.S, cfg.replicas[1])
        elif cfg.equal_replicas:
            reps = np.full(self.S, rng.integers(cfg.replicas[0], cfg.replicas[1] + 1))
        else:
            reps = rng.integers(cfg.replicas[0], cfg.replicas[1] + 1, self.S)
        slots = np.concatenate([s * cfg.max_replicas + np.arange(r) for s, r in enumerate(reps)])
        if cfg.start == "default" or (cfg.start == "mix" and rng.random() < 0.5):
            for slot in slots:
                self.place_default(st, b, slot)
        else:
            self.place_randomly(st, b, slots, rng)
        if (st.node[b, slots] < 0).any():  # no room: retry with an emptier cluster, every node up
            st.bg_cpu[b] = 0
            st.bg_mem[b] = 0
            st.up[b] = True
            st.node[b] = -1
            self.place_randomly(st, b, slots, rng)

    def new_batch(self, B: int) -> Batch:
        return Batch(np.zeros((B, self.N)), np.zeros((B, self.N)), -np.ones((B, self.P), int),
                     np.ones((B, self.N), bool), np.zeros(B, int), -np.ones(B, int), np.zeros(B), np.zeros(B))


def numpy_step(dyn: Dynamics, st: Batch, actions: np.ndarray,
               rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The transition, in place on ``st``: returns (reward, terminated, truncated) per environment."""
    cfg = dyn.cfg
    B = st.node.shape[0]
    valid = dyn.masks(st)[np.arange(B), actions]
    idle = actions == dyn.n_actions - 1
    before = st.latency.copy()
    reward = np.zeros(B)
    terminated = idle.copy()
    invalid = ~valid
    reward[invalid] = -cfg.invalid_penalty
    terminated |= invalid
    move = valid & ~idle
    b = np.flatnonzero(move)
    slot, target = actions[b] // dyn.N, actions[b] % dyn.N
    st.node[b, slot] = target
    st.steps += 1
    # a node fails: its pods are re-placed at random where they fit; not the agent's doing
    failing = np.flatnonzero((st.steps == st.fail_at) & ~terminated)
    for k in failing:
        victim = rng.choice(np.flatnonzero(st.up[k]))
        st.up[k, victim] = False
        lost = np.flatnonzero(st.node[k] == victim)
        st.node[k, lost] = -1
        dyn.place_randomly(st, k, lost, rng)
    after = dyn.latency(st)
    if len(failing):
        before[failing] = after[failing]  # the failure's effect is not the move's reward
    reward[move] = before[move] - after[move] - cfg.move_penalty
    st.latency = after
    truncated = (st.steps >= cfg.max_steps) & ~terminated
    return reward, terminated, truncated


class NumpyCEEnvVector(CEEnvVector):
    """CEEnvVector with the numpy transition and a Python loop over the environments to reset."""

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        for b in range(self.num_envs):
            self.dyn.reset_one(self.st, b, self._rng)
        self.st.latency = self.dyn.latency(self.st)
        return self.dyn.observe(self.st), self._info()

    def step(self, actions):
        r, term, trunc = numpy_step(self.dyn, self.st, np.asarray(actions, int), self._rng)
        done = term | trunc
        info = {}
        if done.any():
            info["final_obs"], info["_final_obs"] = self.dyn.observe(self.st), done.copy()
            for b in np.flatnonzero(done):
                self.dyn.reset_one(self.st, b, self._rng)
            self.st.latency = self.dyn.latency(self.st)
        return self.dyn.observe(self.st), r, term, trunc, {**self._info(), **info}
