"""Paper 003's placement problem: many small cloud-native apps on a three-layer continuum.

An **instance** is an infrastructure (nodes with CPU c_v, RAM r_v, operating cost o_v, networking
cost coefficient n_v, and a propagation delay l between every two nodes) and a list of apps,
each a small graph of microservices (CPU ε, RAM ρ, data size s) with a source node π_a and, on
each arc, the largest delay λ allowed between the two hosting nodes. A solution puts every
microservice on one node. Its objective (eq. 1) is

    w · Σ_a σ_a + (1 − w) · Σ_a θ_a
    σ_a = Σ_i (o_v + n_v · s_{a,i})       for v the node of microservice i       (eq. 6)
    θ_a = max_i l(π_a, v_i)               the app's largest source → node delay  (eq. 7)

subject to capacity (eqs. 4-5) and the arcs' delay caps (eq. 3).

The paper's Tables 2-3 (per-layer costs and delays) and its app generator are lost (see
``../shared/notes/seeds.md`` §3 and §6.1). Every value they held is a field of
:class:`InstanceConfig`, with the value chosen here and marked *assumed*; the capacities are
the paper's own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

LAYERS = ("near-edge", "far-edge", "cloud")


@dataclass(frozen=True)
class Infrastructure:
    layer: np.ndarray  # (V,) index into LAYERS
    cpu: np.ndarray  # (V,) c_v
    ram: np.ndarray  # (V,) r_v
    op_cost: np.ndarray  # (V,) o_v, cost units
    net_cost: np.ndarray  # (V,) n_v, cost units per data unit
    delay: np.ndarray  # (V, V) l_{v,v'} ms, 0 on the diagonal

    @property
    def V(self) -> int:
        return len(self.cpu)


@dataclass(frozen=True)
class AppSpec:
    source: int  # π_a, the node the app's data comes from (a near-edge node)
    cpu: np.ndarray  # (I,) ε
    ram: np.ndarray  # (I,) ρ
    data: np.ndarray  # (I,) s
    arcs: tuple[tuple[int, int, float], ...]  # (i, i', λ) with i < i': the earlier one calls the later one


@dataclass(frozen=True)
class Instance:
    infra: Infrastructure
    apps: tuple[AppSpec, ...]
    w: float = 0.01  # weight of cost against delay (eq. 1); the paper's Table 4 uses 0.01

    @property
    def microservices(self) -> int:
        return sum(len(a.cpu) for a in self.apps)

    def with_weight(self, w: float) -> "Instance":
        return Instance(self.infra, self.apps, w)

    @cached_property
    def flat(self) -> "Flat":
        """The arrays the compiled greedy, rollout and the MILP read, built once per instance."""
        return Flat.of(self)

    def evaluate(self, assign: list[np.ndarray], strict: bool = True) -> dict:
        """The objective and its parts for ``assign`` (per app, the node of each microservice;
        -1: the app was not placed). Strict: raises ValueError if capacity or a delay cap is
        broken; else counts the arcs over their cap (``over_cap``) and the nodes over capacity
        (``over_capacity``), as a placement made by a policy that ignores them is scored."""
        inf = self.infra
        used_cpu, used_ram = np.zeros(inf.V), np.zeros(inf.V)
        op = net = theta = 0.0
        rejected = over_cap = 0
        for a, x in zip(self.apps, assign):
            x = np.asarray(x)
            if (x < 0).any():
                if not (x < 0).all():
                    raise ValueError("an app is either placed whole or not at all")
                rejected += 1
                continue
            np.add.at(used_cpu, x, a.cpu)
            np.add.at(used_ram, x, a.ram)
            for i, j, lam in a.arcs:
                if inf.delay[x[i], x[j]] > lam + 1e-9:
                    if strict:
                        raise ValueError(f"delay {inf.delay[x[i], x[j]]} > λ {lam} on an arc")
                    over_cap += 1
            op += float(inf.op_cost[x].sum())
            net += float((inf.net_cost[x] * a.data).sum())
            theta += float(inf.delay[a.source, x].max())
        over_capacity = int(((used_cpu > inf.cpu + 1e-9) | (used_ram > inf.ram + 1e-9)).sum())
        if strict and over_capacity:
            raise ValueError("a node's capacity is exceeded")
        sigma = op + net
        out = {"objective": self.w * sigma + (1 - self.w) * theta, "cost": sigma, "operating": op,
               "networking": net, "delay": theta, "rejected": rejected}
        return out if strict else out | {"over_cap": over_cap, "over_capacity": over_capacity}


@dataclass(frozen=True)
class Flat:
    """An instance as flat arrays over all microservices in order (app by app), for the
    compiled greedy and rollout; each microservice knows its arcs to earlier ones."""

    app_start: np.ndarray  # (A+1,)
    source: np.ndarray  # (A,)
    cpu: np.ndarray  # (K,)
    ram: np.ndarray
    data: np.ndarray
    arc_start: np.ndarray  # (K+1,): microservice k's arcs to earlier ones are arc_start[k]:arc_start[k+1]
    arc_other: np.ndarray  # the earlier microservice (flat index)
    arc_lambda: np.ndarray

    @classmethod
    def of(cls, inst: Instance) -> "Flat":
        starts, cpu, ram, data, arc_start, other, lam = [0], [], [], [], [0], [], []
        for a in inst.apps:
            base = starts[-1]
            by_later: dict[int, list[tuple[int, float]]] = {}
            for i, j, l in a.arcs:
                by_later.setdefault(j, []).append((i, l))
            for k in range(len(a.cpu)):
                for i, l in by_later.get(k, []):
                    other.append(base + i)
                    lam.append(l)
                arc_start.append(len(other))
            starts.append(base + len(a.cpu))
            cpu += list(a.cpu)
            ram += list(a.ram)
            data += list(a.data)
        f = np.asarray
        return cls(f(starts, np.int64), f([a.source for a in inst.apps], np.int64), f(cpu, float), f(ram, float),
                   f(data, float), f(arc_start, np.int64), f(other, np.int64), f(lam, float))

    def split(self, flat_assign: np.ndarray) -> list[np.ndarray]:
        return [flat_assign[self.app_start[a]:self.app_start[a + 1]].copy() for a in range(len(self.source))]


@dataclass
class InstanceConfig:
    """How instances are generated. Capacities are the paper's (§Simulation Setup); everything
    marked *assumed* stood in the lost Tables 2-3 or the unpublished app generator."""

    near_edge: int = 20  # basic topology 20/5/2; extended 150/30/7
    far_edge: int = 5
    cloud: int = 2
    apps: int = 20
    w: float = 0.01
    # capacities (paper): cores and GB
    near_cpu: tuple[float, float] = (1, 8)
    near_ram: tuple[float, float] = (1, 8)
    far_cpu: tuple[float, float] = (40, 80)
    far_ram: tuple[float, float] = (50, 100)
    cloud_cpu: tuple[float, float] = (400, 600)
    cloud_ram: tuple[float, float] = (600, 800)
    # operating cost o_v per layer, in [1, 10] c.u., near edge dearest (assumed)
    near_op: tuple[float, float] = (7, 10)
    far_op: tuple[float, float] = (4, 6)
    cloud_op: tuple[float, float] = (1, 3)
    # networking cost coefficient n_v per layer, cheaper on edge networks (assumed)
    near_net: float = 0.1
    far_net: float = 0.5
    cloud_net: float = 1.0
    # propagation delay between layers, ms (assumed): near-near, near-far, near-cloud, far-far, far-cloud, cloud-cloud
    delays: tuple[float, float, float, float, float, float] = (1, 5, 50, 10, 30, 5)
    # apps (assumed): microservices per app, a chain; CPU and RAM per microservice; data size; λ per arc
    microservices: tuple[int, int] = (2, 5)
    ms_cpu: tuple[float, float] = (0.1, 2)
    ms_ram: tuple[float, float] = (0.1, 2)
    ms_data: tuple[float, float] = (1, 3)
    arc_lambda: tuple[float, float] = (8, 60)

    def validate(self):
        if min(self.near_edge, self.far_edge, self.cloud) < 0 or self.near_edge < 1:
            raise ValueError("layer sizes must be ≥ 0, with at least one near-edge node (the apps' sources)")
        if self.apps < 1 or not 0 <= self.w <= 1:
            raise ValueError("apps must be ≥ 1 and w in [0, 1]")
        if self.microservices[0] < 1 or self.microservices[1] < self.microservices[0]:
            raise ValueError("microservices must be (low, high) with 1 ≤ low ≤ high")

    @classmethod
    def basic(cls, **kw) -> "InstanceConfig":
        return cls(**kw)

    @classmethod
    def extended(cls, **kw) -> "InstanceConfig":
        return cls(**{"near_edge": 150, "far_edge": 30, "cloud": 7, "apps": 1000, **kw})


def generate(cfg: InstanceConfig, seed: int) -> Instance:
    """One instance; the same (cfg, seed) always gives the same instance."""
    cfg.validate()
    rng = np.random.default_rng(seed)
    counts = (cfg.near_edge, cfg.far_edge, cfg.cloud)
    layer = np.repeat(np.arange(3), counts)

    def per_layer(ranges) -> np.ndarray:
        return np.concatenate([rng.uniform(lo, hi, n) for (lo, hi), n in zip(ranges, counts)])
    cpu = np.round(per_layer((cfg.near_cpu, cfg.far_cpu, cfg.cloud_cpu)))  # whole cores and GB
    ram = np.round(per_layer((cfg.near_ram, cfg.far_ram, cfg.cloud_ram)))
    op = per_layer((cfg.near_op, cfg.far_op, cfg.cloud_op))
    net = np.array((cfg.near_net, cfg.far_net, cfg.cloud_net))[layer]
    nn, nf, nc, ff, fc, cc = cfg.delays
    between = np.array([[nn, nf, nc], [nf, ff, fc], [nc, fc, cc]], float)
    delay = between[layer][:, layer]
    np.fill_diagonal(delay, 0.0)
    infra = Infrastructure(layer, cpu, ram, op, net, delay)
    apps = []
    for _ in range(cfg.apps):
        n = int(rng.integers(cfg.microservices[0], cfg.microservices[1] + 1))
        arcs = tuple((i, i + 1, float(np.round(rng.uniform(*cfg.arc_lambda)))) for i in range(n - 1))
        apps.append(AppSpec(int(rng.integers(cfg.near_edge)), np.round(rng.uniform(*cfg.ms_cpu, n), 2),
                            np.round(rng.uniform(*cfg.ms_ram, n), 2), np.round(rng.uniform(*cfg.ms_data, n), 2), arcs))
    return Instance(infra, tuple(apps), cfg.w)


@dataclass
class Outcome:
    """A method's answer on one instance."""

    method: str
    assign: list[np.ndarray]
    seconds: float
    parts: dict = field(default_factory=dict)  # Instance.evaluate's
    bound: float | None = None  # a proven lower bound on the optimum (exact solvers)
    status: str = ""  # exact solvers: optimal | time limit | infeasible

    @property
    def objective(self) -> float:
        return self.parts["objective"]
