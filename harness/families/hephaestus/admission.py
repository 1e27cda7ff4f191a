"""HephaestusForge's admission policies on the one ground (paper 001): its four greedy baselines,
the spread heuristic of the ablation and the DS agents, as placers of a live or simulated run.

A batch of pods of one service is one deployment request (a request stream's R replicas, or a
service's pods at deployment). It goes whole to one site — HephaestusForge's cluster — or is
spread over sites by a heuristic, or is rejected (every pod None, none started). Inside the
chosen site, Kubernetes' default scheduler picks the nodes, as a Karmada member cluster's own
scheduler does; if the site's nodes cannot hold the pods one by one (its free room is in pieces),
the request is rejected.

The choice is made by the very functions of the simulated world: the cluster view becomes
:class:`~harness.families.hephaestus.world.MultiClusterEnv`'s state in its sites mode — per site the
capacity and allocation summed over its up nodes (cores, GB), the mean cost of its nodes, the mean
RTT between the sites' nodes — and the request row: R, the pod's CPU and memory, the latency
threshold of the Cloud2Edge service of that name (``threshold_ms`` for any other service) and
T_r, the mean gap between requests the model was trained with. So a DS model trained with
``harness train --policy ds-ppo --inventory FILE`` acts on that inventory's testbed unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import groupby
from typing import Callable, Sequence

import numpy as np

from harness import shipped
from harness.errors import UserError
from harness.policies import register
from harness.policies.contract import EPS, Ability, ClusterView, PendingPod, Policy
from harness.families.hephaestus.baselines import BASELINES, SPREAD_HEURISTICS
from harness.policies.heuristics import KubeDefault
from harness.families.hephaestus.world import MultiClusterConfig, MultiClusterEnv, Request, Sites, c2e_services, sites_of
from harness.spec.args import arg

DEFAULT_MODEL = "models/ds-ppo-hephaestus-local.pt"


_STATIC: dict = {}  # (topology, nodes up) -> the sites' fixed parts; one entry: a run has one topology


def _static_sites(view: ClusterView) -> tuple[tuple[str, ...], list[np.ndarray], Sites]:
    """The site names, each site's node mask and the sites (capacity, cost, RTTs) over the up
    nodes: fixed while the same nodes are up, so made once, not for every request (at a thousand
    nodes the RTT means alone took seconds per deployment)."""
    topo, up = view.model.topo, view.up
    key = (id(topo), up.tobytes())
    if (hit := _STATIC.get(key)) is not None and hit[0] is topo:
        return hit[1]
    names = sorted({n.site for n in view.nodes if n.site and n.up})
    if not names:
        raise ValueError("no node of this cluster belongs to a site: admission policies place requests on sites")
    site = np.array([n.site for n in view.nodes], object)
    masks = [(site == s) & up for s in names]
    total = lambda col, m: float(col[m].sum())  # noqa: E731
    lat = np.array([[0.0 if a is b else float(view.rtt[np.ix_(a, b)].mean()) for b in masks] for a in masks])
    cost = np.array([np.mean([n.cost for n, inside in zip(view.nodes, m) if inside]) for m in masks])
    sites = Sites(tuple(names), np.array([total(view.cap_cpu, m) for m in masks]),
                  np.array([total(view.cap_memory_mib, m) / 1024 for m in masks]), cost, lat)
    for a in (*masks, sites.cap_cpu, sites.cap_mem, sites.cost, sites.lat):
        a.flags.writeable = False  # shared by every request of the run
    _STATIC.clear()
    _STATIC[key] = (topo, (tuple(names), masks, sites))
    return tuple(names), masks, sites


def site_state(view: ClusterView) -> tuple[Sites, np.ndarray, np.ndarray, list[np.ndarray]]:
    """(the sites as clusters, allocated cores, allocated GB, each site's node mask) over the up
    nodes that belong to a site."""
    _, masks, sites = _static_sites(view)
    total = lambda col, m: float(col[m].sum())  # noqa: E731
    return sites, np.array([total(view.used_cpu, m) for m in masks]), \
        np.array([total(view.used_memory_mib, m) / 1024 for m in masks]), masks


def threshold_of(service: str, default: float) -> float:
    """The Cloud2Edge threshold of ``service`` (also as ``<app>-<service>``), else ``default``."""
    thresholds = {name: threshold for name, _, _, threshold in c2e_services()}
    found = [name for name in thresholds if service == name or service.endswith("-" + name)]
    return thresholds[max(found, key=len)] if found else default


@dataclass
class AdmissionArgs:
    threshold_ms: float = arg(400.0, "latency threshold Δ_r of a service that is not one of Cloud2Edge's")
    t_r: float = arg(0.01, "the request row's T_r: what the world the policy was made for gives (the paper's "
                           "default: the mean gap between requests, 1/100; the code's: the mean lifetime, 1)")
    seed: int = arg(0, "seed of the policy's own random choices (hf-latency-greedy's)")


class SiteAdmission(Policy):
    """A placer that admits each request (a batch of one service's pods) to a site, spreads it or
    rejects it, with ``action(env)``: an action of the multi-cluster world."""

    abilities = frozenset({Ability.PLACE})
    Args = AdmissionArgs

    def __init__(self, args):
        super().__init__(args)
        self.rng = np.random.default_rng(args.seed)
        self._kube = KubeDefault(KubeDefault.Args())

    def action(self, env: MultiClusterEnv) -> int:
        raise NotImplementedError

    @classmethod
    def unfit_testbed(cls, inventory) -> str | None:
        try:
            sites_of(inventory)
        except UserError:
            return "admits requests onto sites: the testbed has fewer than two"
        return None

    def check(self, view: ClusterView) -> None:
        try:
            site_state(view)
        except ValueError as exc:
            raise UserError(f"{self.name}: {exc}; use an inventory with sites (inventories/hephaestus-local.yaml)",
                            field="--policy") from None

    def world(self, view: ClusterView, pods: Sequence[PendingPod]) -> tuple[MultiClusterEnv, list[np.ndarray]]:
        """The multi-cluster world's state for this view and request (one service's pods)."""
        sites, alloc_cpu, alloc_mem, masks = site_state(view)
        pod = pods[0]
        env = MultiClusterEnv(MultiClusterConfig(background=(0.0, 0.0)), seed=0, sites=sites)
        env.rng = self.rng
        # a site whose free room is in pieces holds fewer of these pods than its summed cores say:
        # then its room is what its nodes hold, counted node by node as Karmada's replica estimator
        # counts (half a pod over, so the world's fit takes that many and no more); otherwise the
        # world would open a site its own scheduler then cannot use
        cpu, mem, fill = max(pod.cpu, EPS), max(pod.memory_mib, EPS), env.cfg.fill
        each = np.floor(np.minimum((view.cap_cpu - view.used_cpu + EPS) / cpu,
                                   (view.cap_memory_mib - view.used_memory_mib + EPS) / mem)).clip(0)
        each = np.where(view.allowed(pod.service), each, 0.0)  # the service's affinity, as its scheduler keeps it
        if view.app.services[pod.service].pod_antiaffinity:
            each = np.minimum(each, 1.0)  # one of its pods per node
        held = np.array([each[m].sum() for m in masks])
        summed = np.floor(np.minimum((fill * sites.cap_cpu - alloc_cpu + EPS) / cpu,
                                     (fill * sites.cap_mem - alloc_mem) * 1024 / mem + EPS))
        env.alloc_cpu = np.where(held < summed, fill * sites.cap_cpu - (held + 0.5) * cpu, alloc_cpu)
        env.alloc_mem = alloc_mem
        env.request = Request(pod.service, len(pods), pod.cpu, pod.memory_mib / 1024,
                              threshold_of(pod.service, self.args.threshold_ms), self.args.t_r, 0.0)
        return env, masks

    def place(self, view: ClusterView, pods: Sequence[PendingPod]) -> list[str | None]:
        out: list[str | None] = []
        for _, group in groupby(pods, key=lambda p: p.service):
            request = list(group)
            env, masks = self.world(view, request)
            split = env.split_of(self.action(env))
            nodes = None if split is None else self._nodes(view, request, split, masks)
            if nodes is None:
                out += [None] * len(request)
                continue
            for pod, node in zip(request, nodes):
                view = view.with_pod(pod, node)
            out += nodes
        return out

    def _nodes(self, view: ClusterView, pods: list[PendingPod], split: np.ndarray,
               masks: list[np.ndarray]) -> list[str] | None:
        """Each pod's node inside the site its share goes to (the site's default scheduler), or
        None when a site cannot hold its share node by node."""
        sites = [c for c, k in enumerate(split) for _ in range(int(k))]
        nodes = []
        for pod, c in zip(pods, sites):
            node = self._kube._choose_among(view, pod, masks[c])
            if node is None:
                return None
            view = view.with_pod(pod, node)
            nodes.append(node)
        return nodes


def _heuristic(policy_name: str, choose: Callable[[MultiClusterEnv], int], what: str) -> type[SiteAdmission]:
    @register
    class Heuristic(SiteAdmission):
        name = policy_name
        description = what

        def action(self, env: MultiClusterEnv) -> int:
            return choose(env)

    Heuristic.__name__ = Heuristic.__qualname__ = "".join(w.title() for w in policy_name.split("-"))
    return Heuristic


CpuGreedy = _heuristic("cpu-greedy", BASELINES["cpu-greedy"], "HephaestusForge's baseline: the whole request to "
                       "the site with the least CPU allocated (share), else reject")
BinpackGreedy = _heuristic("binpack-greedy", BASELINES["binpack-greedy"], "HephaestusForge's baseline: the whole "
                           "request to the site with room and the most CPU allocated (share), else reject")
HfLatencyGreedy = _heuristic("hf-latency-greedy", BASELINES["hf-latency-greedy"], "HephaestusForge's Latency-greedy: "
                             "the whole request to a random site with room whose mean RTT meets its threshold")
KarmadaGreedy = _heuristic("karmada-greedy", BASELINES["karmada-greedy"], "HephaestusForge's baseline: the whole "
                           "request to the site with the most replicas available (Karmada's estimate)")
SpreadFfd = _heuristic("spread-ffd", SPREAD_HEURISTICS["spread-ffd"], "binpack-greedy, spreading the request over "
                       "sites first-fit-decreasing when no site has room for all of it")


@dataclass
class DsArgs(AdmissionArgs):
    model: str = arg("", f"the DS model (harness train --policy ds-ppo|ds-dqn); empty: {DEFAULT_MODEL}")
    t_r: float = arg(-1.0, "the request row's T_r; -1: as the model's training world gives it (the mean gap "
                           "between requests; with hf_compat the mean lifetime)")


@register
class DsAgent(SiteAdmission):
    """DS-PPO or DS-DQN's network (one score per action row), the best allowed action."""

    name = "ds-ppo"
    description = "HephaestusForge's DeepSets agent (PPO or DQN): a whole site, a spread or reject, learned"
    Args = DsArgs

    def __init__(self, args):
        from harness.families.hephaestus.ds_ppo import load_actor, training_world

        path = args.model or str(shipped.find(DEFAULT_MODEL))
        self.net, meta = load_actor(path)
        if args.t_r < 0:
            world = training_world(meta)
            args = replace(args, t_r=world.mean_lifetime if world.hf_compat else 1.0 / world.arrival_rate)
        super().__init__(replace(args, model=path))

    def action(self, env: MultiClusterEnv) -> int:
        from harness.families.hephaestus.ds_ppo import act

        return act(self.net, env)


@dataclass
class DsDqnArgs(DsArgs):
    model: str = arg("", "the DS-DQN model (harness train --policy ds-dqn): none is committed, so one must be given")


@register
class DsDqnAgent(DsAgent):
    """DS-DQN's Q-network on the one ground, as ``ds-ppo`` acts with DS-PPO's actor."""

    name = "ds-dqn"
    description = "HephaestusForge's DeepSets DQN: a whole site, a spread or reject, learned (a model must be given)"
    Args = DsDqnArgs

    def __init__(self, args):
        from harness.errors import UserError

        if not args.model:
            raise UserError("ds-dqn acts with a model of its own: train one (harness train --policy ds-dqn --out "
                            "models) and give it as ds-dqn[model=models/NAME.pt]", field="--policy")
        super().__init__(args)
