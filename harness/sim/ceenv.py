"""CEEnv: REACH's rescheduling environment (§IV-V) on the latency model.

State (REACH): per node CPU and memory availability and capacity, per pod its requests and
node. Pods sit in fixed slots, ``max_replicas`` per service in service order, so a slot's
position says which service it belongs to; empty slots are zero. We add each node's up flag
and the current latency / 1000 (helps the value function; documented change); with ``load``, the
offered load's share of the load range's top.

Action: slot * N + node moves that pod to that node; the last action, ``N_slots * N``, is
Idle. A move is valid when the slot holds a pod, the node is up, is not the pod's node, and
has room for the pod's requests (eq. 1). Reward (eq. 11): D_msa before - after - penalty
(default 2) for a move; Idle ends the episode with 0; an invalid action (possible only
without masking) ends it with -100. Episodes start from random node utilisation and a random
feasible placement (or, half of the time by default, the default scheduler's: where the live
rescheduler starts); a step cap truncates them; optionally a node fails mid-episode and its
pods are re-placed at random (self-healing), as in REACH's node-failure experiment, and
optionally the autoscaler changes a service's replica count mid-episode (new pods placed by
the default scheduler), as under REACH's traffic surge. With ``load`` (not in REACH), each episode
has a load — an open-loop request rate, or a number of closed-loop users — and the latency is the
queueing model's under it (sim.queueing): a node a placement packs makes requests wait, so the
policy can learn when spreading pays.

One pure transition (`step_batch`) serves the batched environment used for training and the
scalar Gymnasium environment (a batch of one).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import gymnasium as gym
import numpy as np

from harness import gym_envs
from harness.sim import ceenv_kernels
from harness.sim.latency import LatencyModel
from harness.sim.queueing import visits
from harness.spec.args import arg

ENV_ID = "harness/CEEnv-v0"  # registered by harness.gym_envs


@dataclass
class EnvConfig:
    max_replicas: int = arg(5, "pod slots per service (the most replicas a policy sees)")
    replicas: tuple[int, int] = arg((1, 5), "replicas per service drawn per episode (inclusive range)")
    # one count for every service, as in REACH's experiments (and `harness sweep`); with a
    # count per service, the large deployments the policy must handle would be rare
    equal_replicas: bool = arg(True, "one replica count for every service in an episode")
    # a big deployment needs long runs of coordinated moves (one replica moved alone first makes
    # things worse), which uniform draws give too rarely
    large_share: float = arg(0.0, "share of episodes at the largest replica count")
    utilisation: tuple[float, float] = arg((0.0, 0.5), "background CPU/memory use, share of capacity (range)")
    move_penalty: float = arg(2.0, "reward penalty per move (REACH eq. 11; Table V: 2)")
    invalid_penalty: float = arg(100.0, "reward of an invalid action (only without masking)")
    max_steps: int = arg(30, "steps before an episode is truncated")
    node_failure_prob: float = arg(0.0, "chance per episode that one node fails at a random step")
    # the state the live rescheduler meets after a node failure and self-healing
    failed_at_start: float = arg(0.0, "share of episodes that start with 1..max_failed_at_start nodes down "
                                      "and the pods on the others")
    max_failed_at_start: int = arg(2, "most nodes down at an episode's start")
    # REACH's random placement, the default scheduler's (where the live rescheduler starts), or each half the time
    start: str = arg("mix", "where episodes start: random, default or mix")
    # the HPA at work (issue 20): a scale-up's new pods land where the default scheduler puts
    # them, so the rescheduler meets scaled-out replicas it did not place; 0 keeps REACH's world
    scale_prob: float = arg(0.0, "chance per step that the autoscaler rescales one service (its new pods placed "
                                 "by the default scheduler, a scale-down removing the newest)")
    # the offered load (issue 20's traffic surge): REACH's model has none, so packing pods on a few
    # nodes looks free however many requests come; under load the reward's latency waits in
    # queues (sim.queueing) and the load is one more observation feature
    load: tuple[float, float] = arg((0.0, 0.0), "the app's load per episode, drawn uniformly in this range (closed: "
                                                "whole users); the latency is then the queueing model's (0,0: "
                                                "REACH's load-free world)")
    load_kind: str = arg("open", "what --load counts: open (requests/s; node-ps queueing) or closed (closed-loop "
                                 "users, as Locust's; mean value analysis, 1 user = no waiting)")
    load_knee: float = arg(0.9, "with an open --load: node busy share beyond which a job's stretch 1/(1-rho) goes on "
                                "as its tangent line (finite, so overloaded placements still rank)")

    def validate(self):
        if self.start not in ("random", "default", "mix"):
            raise ValueError("start must be random, default or mix")
        for name in ("large_share", "failed_at_start", "node_failure_prob", "scale_prob"):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"{name} must be within [0, 1]")
        if not 0 <= self.load[0] <= self.load[1]:
            raise ValueError("load must be a range LO,HI with 0 <= LO <= HI")
        if self.load_kind not in ("open", "closed"):
            raise ValueError("load_kind must be open or closed")
        if self.load_kind == "closed" and self.loaded and self.load[0] < 1:
            raise ValueError("a closed load counts users: LO must be at least 1")
        if not 0 < self.load_knee < 1:
            raise ValueError("load_knee must be within (0, 1)")

    @property
    def loaded(self) -> bool:
        return self.load[1] > 0


@dataclass
class Batch:
    """Arrays of B environments."""

    bg_cpu: np.ndarray  # (B, N) cores used by others
    bg_mem: np.ndarray  # (B, N) MiB used by others
    node: np.ndarray  # (B, P) node of each slot's pod, -1 when empty
    up: np.ndarray  # (B, N) bool
    steps: np.ndarray  # (B,)
    fail_at: np.ndarray  # (B,) step at which a node fails, -1 never
    latency: np.ndarray = field(default=None)  # (B,)
    load: np.ndarray = field(default=None)  # (B,) requests/s or closed-loop users (0: no load, REACH's model)


class Dynamics:
    """Everything the transition needs, fixed for an app and a topology."""

    def __init__(self, model: LatencyModel, cfg: EnvConfig):
        self.model, self.cfg = model, cfg
        self.S, self.N = model.S, len(model.topo.nodes)
        self.P = self.S * cfg.max_replicas
        self.slot_service = np.repeat(np.arange(self.S), cfg.max_replicas)
        self.r_cpu = np.array([model.app.cpu_request(s) for s in model.services])[self.slot_service]
        self.r_mem = np.array([model.app.memory_request(s) for s in model.services])[self.slot_service]
        self.C_cpu, self.C_mem = model.topo.cpus, model.topo.memory_mib
        # the app's placement constraints per slot: node_affinity (P, N), pod_antiaffinity (P,)
        app = model.app
        self.affinity = np.array([[app.may_run_on(s, n) for n in model.topo.nodes] for s in model.services])[self.slot_service]
        self.spread = np.array([app.spreads(s) for s in model.services])[self.slot_service]
        self.n_actions = self.P * self.N + 1
        self.obs_dim = 5 * self.N + self.P * (3 + self.N) + 1 + cfg.loaded

        # the arrays the compiled rules take (harness.sim.ceenv_kernels)
        i64 = lambda v: np.ascontiguousarray(v, dtype=np.int64)  # noqa: E731
        f64 = lambda v: np.ascontiguousarray(v, dtype=np.float64)  # noqa: E731
        self.world = (i64(self.slot_service), f64(self.r_cpu), f64(self.r_mem), f64(self.C_cpu), f64(self.C_mem),
                      np.ascontiguousarray(self.affinity, dtype=np.bool_), np.ascontiguousarray(self.spread, dtype=np.bool_))
        self.kmodel = (f64(model.E), *model.rtt, model.user_rtt, *model.graph, f64(visits(model)))
        k = ceenv_kernels
        c = np.zeros(k.N_CFG)
        c[k.UTIL_LO], c[k.UTIL_HI] = cfg.utilisation
        c[k.FAILED_AT_START], c[k.MAX_FAILED], c[k.FAILURE_PROB] = cfg.failed_at_start, cfg.max_failed_at_start, cfg.node_failure_prob
        # an episode's replicas within the slots: the compiled kernels write into max_replicas slots unchecked
        # (EnvConfig(max_replicas=3) with the default range 1-5 wrote past them and crashed the process)
        rep_lo, rep_hi = (max(1, min(int(r), cfg.max_replicas)) for r in cfg.replicas)
        c[k.MAX_STEPS], (c[k.REP_LO], c[k.REP_HI]), c[k.EQUAL] = cfg.max_steps, (rep_lo, rep_hi), cfg.equal_replicas
        c[k.LARGE_SHARE], c[k.MOVE_PENALTY], c[k.INVALID_PENALTY] = cfg.large_share, cfg.move_penalty, cfg.invalid_penalty
        c[k.START] = {"random": k.START_RANDOM, "default": k.START_DEFAULT, "mix": k.START_MIX}[cfg.start]
        c[k.SCALE_PROB], c[k.MAX_REPLICAS] = cfg.scale_prob, cfg.max_replicas
        c[k.LOAD_HI], c[k.LOAD_CLOSED], c[k.LOAD_KNEE] = cfg.load[1], cfg.load_kind == "closed", cfg.load_knee
        self.kcfg = c
        self.reset_draws = k.reset_draws(self.N, self.S, self.P)
        self.step_draws = k.step_draws(self.P)

    # -------------------------------------------------------------- derived state
    def counts(self, node: np.ndarray) -> np.ndarray:
        B = node.shape[0]
        X = np.zeros((B, self.S, self.N))
        b, p = np.nonzero(node >= 0)
        np.add.at(X, (b, self.slot_service[p], node[b, p]), 1)
        return X

    def used(self, st: Batch) -> tuple[np.ndarray, np.ndarray]:
        """(cpu, mem) in use per node (B, N): background plus the pods' requests."""
        cpu, mem = np.empty_like(st.bg_cpu), np.empty_like(st.bg_mem)
        ceenv_kernels.used_all(st.bg_cpu, st.bg_mem, st.node, self.world, cpu, mem)
        return cpu, mem

    def latency(self, st: Batch) -> np.ndarray:
        out = np.empty(st.node.shape[0])
        ceenv_kernels.latencies(st.node, st.load, self.world, self.kmodel, self.kcfg, self.S, self.N, out)
        return out

    def masks(self, st: Batch) -> np.ndarray:
        out = np.empty((st.node.shape[0], self.n_actions), np.bool_)
        ceenv_kernels.masks(st.bg_cpu, st.bg_mem, st.node, st.up, self.world, out)
        return out

    def observe(self, st: Batch) -> np.ndarray:
        out = np.empty((st.node.shape[0], self.obs_dim), np.float32)
        ceenv_kernels.observe(st.bg_cpu, st.bg_mem, st.node, st.up, st.latency, st.load, self.world, self.kcfg, out)
        return out

    def observation_space(self) -> gym.spaces.Box:
        """Bounds the observations keep: shares, flags and one-hot entries in [0, 1], a slot's
        requests up to its service's (cores, GiB), the latency feature (s) up to the model's bound (under
        load it may exceed it: the bound is the load-free one), and under load the load's share of its range's top."""
        per_slot = np.concatenate([np.ones((self.P, 1)), self.r_cpu[:, None], self.r_mem[:, None] / 1024,
                                   np.ones((self.P, self.N))], axis=1)
        bound = self.model.upper_bound_ms() / 1000 if not self.cfg.loaded else np.inf
        high = np.concatenate([np.ones(5 * self.N), per_slot.reshape(-1), [bound], [1.0] * self.cfg.loaded])
        return gym.spaces.Box(np.zeros(self.obs_dim, np.float32), high.astype(np.float32), dtype=np.float32)

    # -------------------------------------------------------------- episodes
    def reset(self, st: Batch, which: np.ndarray, rng: np.random.Generator, replicas: np.ndarray | None = None) -> None:
        """New episodes in the environments ``which`` (B,) marks; their latency recomputed."""
        B = st.node.shape[0]
        u = rng.random((B, self.reset_draws))
        reps = -np.ones(self.S, np.int64) if replicas is None else np.ascontiguousarray(replicas, dtype=np.int64)
        if replicas is not None and (reps.shape != (self.S,) or reps.min() < 1 or reps.max() > self.cfg.max_replicas):
            # the compiled start writes slots without bounds checks: refuse counts it has no slots for
            raise ValueError(f"replicas must be {self.S} counts within 1..{self.cfg.max_replicas}, got {reps.tolist()}")
        if self.cfg.loaded:  # drawn after u, from the same generator: without load the stream is REACH's
            lo, hi = self.cfg.load
            draw = rng.random(int(np.count_nonzero(which)))
            st.load[which] = int(lo) + np.floor(draw * (int(hi) - int(lo) + 1)) if self.cfg.load_kind == "closed" \
                else lo + (hi - lo) * draw
        ceenv_kernels.reset_envs(np.ascontiguousarray(which, dtype=np.bool_), u, reps, st.bg_cpu, st.bg_mem, st.node,
                                 st.up, st.steps, st.fail_at, st.latency, st.load, self.world, self.kmodel, self.kcfg,
                                 self.S)

    def reset_one(self, st: Batch, b: int, rng: np.random.Generator, replicas: np.ndarray | None = None) -> None:
        which = np.zeros(st.node.shape[0], np.bool_)
        which[b] = True
        self.reset(st, which, rng, replicas)

    def new_batch(self, B: int) -> Batch:
        return Batch(np.zeros((B, self.N)), np.zeros((B, self.N)), -np.ones((B, self.P), np.int64),
                     np.ones((B, self.N), np.bool_), np.zeros(B, np.int64), -np.ones(B, np.int64), np.zeros(B),
                     np.zeros(B))


def step_batch(dyn: Dynamics, st: Batch, actions: np.ndarray,
               rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The transition, in place on ``st``: returns (reward, terminated, truncated) per environment."""
    B = st.node.shape[0]
    reward, terminated, truncated = np.empty(B), np.empty(B, np.bool_), np.empty(B, np.bool_)
    u = rng.random((B, dyn.step_draws))  # the events' draws (ceenv_kernels.step_envs)
    ceenv_kernels.step_envs(np.ascontiguousarray(actions, dtype=np.int64), u, st.bg_cpu, st.bg_mem, st.node, st.up,
                            st.steps, st.fail_at, st.latency, st.load, dyn.world, dyn.kmodel, dyn.kcfg, dyn.S, reward,
                            terminated, truncated)
    return reward, terminated, truncated


class CEEnv(gym.Env):
    """The scalar Gymnasium environment: a batch of one."""

    metadata = {"render_modes": []}

    def __init__(self, model: LatencyModel | None = None, config: EnvConfig | None = None,
                 app: str | None = None, profile: str | None = None):
        if model is None:
            model = default_model(app, profile)
        self.dyn = Dynamics(model, config or EnvConfig())
        self.observation_space = self.dyn.observation_space()
        self.action_space = gym.spaces.Discrete(self.dyn.n_actions)
        self.st = self.dyn.new_batch(1)
        self._rng = np.random.default_rng()

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._rng = np.random.default_rng(self.np_random.integers(2**63))
        reps = None if not options or "replicas" not in options else np.asarray(options["replicas"])
        self.dyn.reset_one(self.st, 0, self._rng, reps)
        return self._obs(), self._info()

    def step(self, action):
        r, term, trunc = step_batch(self.dyn, self.st, np.array([int(action)]), self._rng)
        return self._obs(), float(r[0]), bool(term[0]), bool(trunc[0]), self._info()

    def action_masks(self) -> np.ndarray:
        return self.dyn.masks(self.st)[0]

    def _obs(self) -> np.ndarray:
        return self.dyn.observe(self.st)[0]

    def _info(self) -> dict:
        return {"action_mask": self.action_masks(), "latency_ms": float(self.st.latency[0])}


class CEEnvVector(gym.vector.VectorEnv):
    """The batched dynamics as Gymnasium's vector environment (``gym.make_vec(ENV_ID, n,
    vectorization_mode="vector_entry_point")``): one transition for all sub-environments, reset in
    the same step (``info["final_obs"]`` holds the last observation of an ended episode), action
    masks in ``info["action_mask"]``. It is the one batched face of the dynamics: harness's own
    trainers (REACH's PPO, RSDQL's DQN) and benchmarks step it as a Gymnasium user would; ``dyn``
    gives it a ``Dynamics`` already built (a profile's, under a training config)."""

    metadata = {"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 1, model: LatencyModel | None = None, config: EnvConfig | None = None,
                 app: str | None = None, profile: str | None = None, dyn: Dynamics | None = None, **_ignored):
        self.dyn = dyn or Dynamics(model or default_model(app, profile), config or EnvConfig())
        self.num_envs = num_envs
        self.single_observation_space = self.dyn.observation_space()
        self.single_action_space = gym.spaces.Discrete(self.dyn.n_actions)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, num_envs)
        self.st = self.dyn.new_batch(num_envs)
        self._rng = np.random.default_rng()

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.dyn.reset(self.st, np.ones(self.num_envs, np.bool_), self._rng)
        return self.dyn.observe(self.st), self._info()

    def step(self, actions):
        r, term, trunc = step_batch(self.dyn, self.st, np.asarray(actions, int), self._rng)
        done = term | trunc
        info = {}
        if done.any():
            info["final_obs"] = self.dyn.observe(self.st)
            info["_final_obs"] = done.copy()
            self.dyn.reset(self.st, done, self._rng)
        return self.dyn.observe(self.st), r, term, trunc, {**self._info(), **info}

    def _info(self) -> dict:
        return {"action_mask": self.dyn.masks(self.st), "latency_ms": self.st.latency.copy()}


def default_model(app: str | None, profile: str | None) -> LatencyModel:
    """The shipped Chain app and its profile on the default testbed (the env checker's default)."""
    from harness import shipped
    from harness.sim.topology import model_for
    from harness.spec.app import load_app
    from harness.spec.profile import load_profile

    # gym.make("harness/CEEnv-v0", app="chain", profile="chain.reach-local"): names or the user's paths
    app = str(shipped.user_file(app, "app")) if app else str(shipped.workload("chain"))
    profile = str(shipped.user_file(profile, "profile")) if profile else str(shipped.profile("chain"))
    return model_for(load_app(app), load_profile(profile))


def load_dynamics(app_file, profile_file, testbed_file=None, config: EnvConfig | None = None):
    """(app, profile, Dynamics) from the app, profile and optional testbed state files: what
    `harness train`, `harness sweep` and the benchmarks build the simulator from."""
    from harness.sim.topology import model_for
    from harness.spec.app import load_app
    from harness.spec.loader import load_model
    from harness.spec.profile import load_profile
    from harness.spec.testbed_state import TestbedState

    app = load_app(app_file)
    profile = load_profile(profile_file)
    state = load_model(TestbedState, testbed_file) if testbed_file else None
    model = model_for(app, profile, state, source=str(profile_file))
    app.check_nodes(list(model.topo.nodes), str(app_file))
    return app, profile, Dynamics(model, config or EnvConfig())


gym_envs.register()  # ENV_ID is one of harness.gym_envs.ENVS
