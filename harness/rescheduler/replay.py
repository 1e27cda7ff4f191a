"""Replica schedules replayed in simulation: KubeDSM's experiment (paper 004, §6) for any policy.

A schedule is a list of cycles, each a replica count per service: what the paper's request
rates made the HPA want. The replay runs second by second: every HPA sync (15 s) moves each
service's count toward the cycle's as Kubernetes' HPA does (:class:`HpaBehaviour`); pods beyond
the count are removed in kube's ReplicaSet order (the node holding most of the service's
replicas first, then the newest; the same rule for every policy) and, as in Kubernetes, hold
their requests while they terminate (``terminating_s``); new pods are placed by the policy (or
the placer a rescheduler names), interleaved across services, as one batch; a policy
that plans is asked every ``period_s`` (the code's 1 s suggestion period) and its moves made.
The edge ratio is the mean over seconds of the mean over services of the share of pods on edge
nodes. Every policy sees the same schedules.

The m_σ schedules (the paper's workloads, after the authors' generator): per cycle, deployment
d's count is round(N(m·k_d, σ·k_d)), at least 1, with k_d = the mean over resources of
(edge capacity / number of services) / d's request: m is the edge need as a multiple of the
edge's capacity, split equally over the deployments. As in the generator (genny's load_config),
that capacity is each edge node's less 1 core and 1 GB ("for safety"; what K3s's own pods and
the kubelet leave): the authors' published logs never show an edge node holding its full cores.
"""

from __future__ import annotations

import copy
import dataclasses
import time
from dataclasses import dataclass, field

import numpy as np

from harness.autoscaler import scale_up_limit, stabilised
from harness.policies import placer_for
from harness.policies.contract import Ability, ClusterView, PodView, Policy
from harness.results import placement_metrics as pm
from harness.sim.latency import LatencyModel
from harness.spec.app import App

CYCLES, CYCLE_S = 12, 90.0  # the paper's 12 cycles of 90 s
WORKLOADS = [(m, 0.4) for m in (1.1, 1.2, 1.3, 1.4, 1.5, 1.6)] + [(1.5, s) for s in (0.1, 0.2, 0.3, 0.5)]
# the paper counts 11 (Figs. 4 and 5 both hold 1.5_0.4); 10 distinct schedules


def _resized(model: LatencyModel, cpus: np.ndarray, memory_mib: np.ndarray) -> LatencyModel:
    out = copy.copy(model)
    out.topo = dataclasses.replace(model.topo, cpus=cpus, memory_mib=memory_mib)
    return out


def unlimited_cloud(model: LatencyModel) -> LatencyModel:
    """The paper's model of the cluster (§4.1.1): the cloud's capacity has no limit (the testbed's
    cloud node has 22 cores, "enough in practice"); the edge nodes as they are."""
    topo = model.topo
    cloud = np.array([r != "edge" for r in topo.roles])
    return _resized(model, np.where(cloud, 1e6, topo.cpus), np.where(cloud, 1e9, topo.memory_mib))


def with_system_reserved(model: LatencyModel, cpus: float, memory_mib: float) -> LatencyModel:
    """The edge nodes less what the system's own pods hold (allocatable, not capacity): the
    paper's tables give capacities only, so this is 0 unless a reading asks for it."""
    topo = model.topo
    edge = np.array([r == "edge" for r in topo.roles])
    return _resized(model, np.where(edge, topo.cpus - cpus, topo.cpus),
                    np.where(edge, topo.memory_mib - memory_mib, topo.memory_mib))


def workload_name(m: float, sigma: float) -> str:
    return f"{m:.1f}_{sigma:.1f}"


GENERATOR_RESERVE = (1.0, 1024.0)  # cores, MiB per edge node: genny's load_config takes these off
# CHOSEN: how long a pod scaled down keeps its node's room. Kubernetes deletes a pod gracefully:
# it stays on its node, its requests counted by the scheduler, until its containers have exited
# and the kubelet has reported it — a second or two for a process that exits on SIGTERM, up to
# terminationGracePeriodSeconds (30 s) for one that does not. Pods created by the same scale-up
# are scheduled within that time, so they cannot use the room the scale-down frees. 2 s: the
# prompt case (harness's cells drain and exit at once); 0 frees the room before placing.
TERMINATING_S = 2.0


def m_sigma_schedule(app: App, model: LatencyModel, m: float, sigma: float, seed: int,
                     cycles: int = CYCLES, reserve: tuple[float, float] = GENERATOR_RESERVE) -> list[dict[str, int]]:
    roles = model.topo.roles
    edge_cap = np.array([[model.topo.cpus[i] - reserve[0], model.topo.memory_mib[i] - reserve[1]]
                         for i in range(len(roles)) if roles[i] == "edge"])
    share = edge_cap.sum(axis=0) / len(app.services)
    k = {s: float(np.mean(share / np.array([app.cpu_request(s), app.memory_request(s)]))) for s in app.services}
    rng = np.random.default_rng(seed)
    return [{s: max(1, int(round(rng.normal(m * k[s], sigma * k[s])))) for s in app.services} for _ in range(cycles)]


@dataclass(frozen=True)
class HpaBehaviour:
    """How the schedule's counts reach the cluster: the HPA every ``sync_s``, scale-up limited as
    Kubernetes' default behaviour (the larger of +4 pods and +100 % a period), scale-down only to
    the highest count wanted in the last ``down_window_s`` (300 s by default). ``instant``: every
    cycle's counts at once, at its start."""

    sync_s: float = 15.0
    down_window_s: float = 300.0
    instant: bool = False


@dataclass
class Replay:
    policy: str
    edge_ratio: float  # mean over seconds of the mean over services of the edge share
    edge_ratio_std: float  # mean over seconds of the std of the services' edge shares
    per_service: dict[str, float]  # each service's edge share, mean over seconds
    rejected: int  # pods the placer left pending
    migrations: dict[str, int] = field(default_factory=dict)  # by the roles of the nodes: edge->cloud, ...
    decide_seconds: float = 0.0  # wall time spent deciding (placing and planning)


def scale_down_order(view: ClusterView, service: str) -> list[PodView]:
    """The service's pods in the order kube's ReplicaSet deletes them: those on the node holding
    most of its replicas first, then the newest (the ranking's last criteria, all pods running)."""
    pods = view.pods_of(service)
    per_node: dict[str, int] = {}
    for p in pods:
        per_node[p.node] = per_node.get(p.node, 0) + 1
    return sorted(pods, key=lambda p: (-per_node[p.node], -int(p.name.rsplit("-", 1)[1])))


class _Cluster:
    """The replay's cluster: a view, the pods' serials, and what happened."""

    def __init__(self, app: App, model: LatencyModel, terminating_s: float = TERMINATING_S):
        self.app, self.model, self.terminating_s = app, model, terminating_s
        topo = model.topo
        self.nodes = {n: pm.NodeInfo(topo.roles[i], float(topo.cpus[i]), float(topo.memory_mib[i]))
                      for i, n in enumerate(topo.nodes)}
        self.up = [True] * len(model.topo.nodes)
        self.view = ClusterView.build(app, model, self.up, [])
        self.serial, self.rejected, self.spent = 0, 0, 0.0
        self.migrations: dict[str, int] = {}
        self.terminating: list[tuple[float, PodView]] = []  # (gone at, pod): room held, not a replica

    def _rebuild(self, pods) -> None:
        """The view of ``pods``, the terminating pods' room held."""
        self.view = ClusterView.build(self.app, self.model, self.up, pods, leaving=[p for _, p in self.terminating])

    def expire(self, t: float) -> bool:
        """Let go of the pods whose termination has ended by ``t``; whether any did."""
        left = [(end, p) for end, p in self.terminating if end > t + 1e-9]
        if len(left) == len(self.terminating):
            return False
        self.terminating = left
        self._rebuild(list(self.view.pods))
        return True

    def scale(self, counts: dict[str, int], placer: Policy, t: float = 0.0) -> bool:
        keep = list(self.view.pods)
        for s, want in counts.items():
            mine = scale_down_order(self.view, s)
            for p in mine[:max(0, len(mine) - want)]:
                keep.remove(p)
                if self.terminating_s > 0:
                    self.terminating.append((t + self.terminating_s, p))
        changed = len(keep) != len(self.view.pods)
        if changed:
            self._rebuild(keep)
        have = {s: len(self.view.pods_of(s)) for s in self.app.services}
        waves = max([counts[s] - have[s] for s in self.app.services] + [0])
        pending = [self.view.pending(s) for w in range(waves) for s in self.app.services if have[s] + w < counts[s]]
        if not pending:
            return changed
        t = time.perf_counter()
        nodes = placer.place(self.view, pending)
        self.spent += time.perf_counter() - t
        for pod, node in zip(pending, nodes):
            if node is None:
                self.rejected += 1
                continue
            self.serial += 1
            self.view = self.view.with_pod(pod, node, name=f"{pod.service}-{self.serial}")
        return True

    def edge_shares(self) -> dict[str, float]:
        return pm.edge_ratios(self.view.placement(), self.nodes)

    def plan(self, policy: Policy, t: float = 0.0) -> bool:
        """Ask the planner and make its valid moves in order. A moved pod's old copy terminates
        like a scaled-down one (the paper's migration deletes it; harness's starts the new one
        first), so the room it leaves is held too."""
        clock = time.perf_counter()
        moves = policy.plan(self.view)
        self.spent += time.perf_counter() - clock
        moved = False
        for mv in moves:
            if self.view.valid(mv):
                old = self.view.pod(mv.pod)
                kind = f"{self.view.node(old.node).role}->{self.view.node(mv.node).role}"
                self.migrations[kind] = self.migrations.get(kind, 0) + 1
                self.view = self.view.after(mv)
                if self.terminating_s > 0:
                    self.terminating.append((t + self.terminating_s, old))
                    self._rebuild(list(self.view.pods))
                moved = True
        return moved


def replay(policy: Policy, name: str, app: App, model: LatencyModel, schedule: list[dict[str, int]],
           hpa: HpaBehaviour = HpaBehaviour(), period_s: float = 1.0, cycle_s: float = CYCLE_S,
           terminating_s: float = TERMINATING_S) -> Replay:
    """Play ``schedule`` (a count per service per cycle) second by second: the HPA's syncs change
    the counts and the placer places new pods; a planner is asked every ``period_s`` (only when
    the cluster changed since it last answered idle: the policies are deterministic); each
    second's edge shares are averaged. A pod scaled down holds its room for ``terminating_s``."""
    placer = placer_for(policy)
    plans = policy.can(Ability.PLAN)
    c = _Cluster(app, model, terminating_s)
    history: dict[str, list[tuple[float, int]]] = {s: [] for s in app.services}
    counts = {s: 0 for s in app.services}
    idle = False
    per: dict[str, list[float]] = {s: [] for s in app.services}
    ratios: list[float] = []
    stds: list[float] = []
    steps = int(round(len(schedule) * cycle_s / period_s))
    sync_every = max(1, int(round(hpa.sync_s / period_s)))
    for k in range(steps):
        t = k * period_s
        target = schedule[min(len(schedule) - 1, int(t // cycle_s))]
        idle &= not c.expire(t)
        if hpa.instant and t % cycle_s < period_s / 2:
            idle &= not c.scale(dict(target), placer, t)
        elif not hpa.instant and k % sync_every == 0:
            for s in app.services:
                n = counts[s]
                want = stabilised(history[s], t, target[s], n, hpa.down_window_s)
                counts[s] = min(want, scale_up_limit(n)) if n else want  # from zero: straight to the count
            idle &= not c.scale(counts, placer, t)
        if plans and not idle:
            idle = not c.plan(policy, t)
        shares = c.edge_shares()
        if shares:
            ratios.append(float(np.mean(list(shares.values()))))
            stds.append(float(np.std(list(shares.values()))))
            for s, v in shares.items():
                per[s].append(v)
    return Replay(name, float(np.mean(ratios)), float(np.mean(stds)),
                  {s: float(np.mean(v)) for s, v in per.items() if v}, c.rejected, c.migrations, c.spent)
