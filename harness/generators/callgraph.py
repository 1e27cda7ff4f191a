"""An app of any size as a μBench workmodel, its call graph shaped as Alibaba's microservices are.

What the generated graph follows, and where it comes from:

- Luo et al., "Characterizing Microservice Dependency and Performance: Alibaba Trace Analysis",
  SoCC'21: call graphs are heavy-tailed in size, tree-like (many of them one long chain), and
  many microservices are hot spots shared by many others; per its Fig. 4 (as its authors state it
  in alibaba/clusterdata issue #123), 90 % of microservices have an in-degree of one and 10 % an
  out-degree of at least 5 within a call graph.
- The out-degree law: the fan-out distribution the same group released as the input of their
  call-graph model (Cloud-and-Distributed-Systems/Erms, graphGenerator/depthDistribution.csv,
  first level): P(1) = 0.222, P(2) = 0.479, P(3) = 0.177, P(4) = 0.025 and P(≥ 5) = 0.096 (so
  about 10 % call five or more, as Fig. 4), the tail falling as k^-2 out to a hundred and more
  callees (``FANOUT``, ``TAIL_EXPONENT``).

How (``Shape`` holds every number): the gateway's call tree grows breadth first; a service calls
k callees drawn from the law above, each callee a new service, or with probability ``share`` one
of the hot spots (shared leaves, 10 % of the services, picked by a Zipf popularity: the caches
and stores many services read); a new service calls on in turn unless it is a leaf (``leaf``). A
request takes a subtree of that dependency graph: each call is made with a probability that gives
every service ``branching`` calls per request on average (1: a critical branching process, whose
sizes are heavy-tailed), so one request's call graph is small and another's large, as in the
trace, while the app holds every service. Callees are split into groups that run in parallel,
each group's calls in sequence (μBench's ``external_services``).

Each service runs the loader job of the shipped Chain (``workloads/chain.json``) with its CPU
stress repeated ``trials`` times, lognormal (median 2, ~9 ms on the fastest node type) so a few
services are much slower than the rest; ``harness.generators.profile`` models its execution times.
Replicas follow each service's share of the CPU the requests need (visits × modelled time), as an
autoscaler would give them, ``pods`` in all.

``app`` returns the wrapped workmodel ({name, gateway, services}); ``stats`` measures a graph
(fan-out, in-degree, depth, services per request) for the tests and ``harness generate app``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from harness.generators.profile import BASE_MS, PER_TRIAL_MS

FANOUT = {1: 0.222, 2: 0.479, 3: 0.177, 4: 0.025}  # P(k) callees; the rest (0.097) is the tail k ≥ 5
TAIL_EXPONENT = 2.0  # P(k) ∝ k^-2 for k ≥ 5


@dataclass(frozen=True)
class Shape:
    share: float = 0.25  # a call slot goes to a hot spot with this probability
    hot_spots: float = 0.1  # hot spots, a share of the services (at least one)
    hot_zipf: float = 0.8  # the popularity of the hot spot of rank r ∝ r^-hot_zipf
    leaf: float = 0.3  # a new (non-hot) service calls no one with this probability
    branching: float = 1.0  # calls per request a service makes on average
    parallel: float = 0.5  # each callee after the first starts a new parallel group with this probability
    trials_median: float = 2.0  # the loader's CPU stress repetitions (lognormal)
    trials_sigma: float = 0.8
    max_trials: int = 40
    cpu_requests: tuple[str, ...] = ("100m", "200m", "250m", "500m")
    memory_requests: tuple[str, ...] = ("128Mi", "256Mi", "512Mi")


def fanout_law(k_max: int) -> np.ndarray:
    """P(k) for k = 0..k_max (0 has P = 0): ``FANOUT`` and the k^-2 tail, renormalised to k_max."""
    p = np.zeros(k_max + 1)
    for k, v in FANOUT.items():
        if k <= k_max:
            p[k] = v
    if k_max >= 5:
        tail = np.arange(5, k_max + 1, dtype=float) ** -TAIL_EXPONENT
        p[5:] = tail / tail.sum() * (1.0 - sum(FANOUT.values()))
    return p / p.sum()


def app(services: int, seed: int = 0, name: str = "generated", pods: int | None = None,
        shape: Shape = Shape()) -> dict:
    """A wrapped μBench workmodel of ``services`` services (gateway ``s0``), ``pods`` pods in all
    (default one per service)."""
    if services < 2:
        raise ValueError("an app needs at least 2 services")
    pods = services if pods is None else pods
    if pods < services:
        raise ValueError(f"{pods} pods cannot give each of {services} services one")
    rng = np.random.default_rng(seed)
    n_hot = max(1, round(shape.hot_spots * services))
    law = fanout_law(max(5, services - 1))
    calls: list[list[int]] = [[]]  # per service, its callees in call order
    hot: list[int] = []  # the hot spots, by popularity rank
    frontier = [0]  # services that still make their calls, breadth first
    leaves: list[int] = []  # non-hot services that call no one (a spare caller if the tree dies out)
    while len(calls) < services:
        if not frontier:  # every branch ended before the app was complete: a leaf calls on
            frontier.append(leaves.pop(int(rng.integers(len(leaves)))) if leaves else 0)
        caller = frontier.pop(0)
        k = int(rng.choice(len(law), p=law))
        for _ in range(k):
            if len(calls) >= services:
                break
            if rng.random() < shape.share and (hot or len(calls) < services):
                callee = _hot_spot(rng, hot, n_hot, calls, shape.hot_zipf)
                if callee in calls[caller]:
                    continue
            else:
                callee = len(calls)
                calls.append([])
                (leaves if rng.random() < shape.leaf else frontier).append(callee)
            calls[caller].append(callee)
    names = [f"s{i}" for i in range(services)]
    prob = _probabilities(rng, calls, shape.branching)
    trials = np.clip(np.round(rng.lognormal(math.log(shape.trials_median), shape.trials_sigma, services)), 1,
                     shape.max_trials).astype(int)
    replicas = _replicas(_visits(calls, prob, services) * (BASE_MS + PER_TRIAL_MS * trials), pods)
    out = {}
    for i in range(services):
        groups: list[list[int]] = []
        for j, callee in enumerate(calls[i]):
            if j == 0 or rng.random() < shape.parallel:
                groups.append([])
            groups[-1].append(callee)
        out[names[i]] = {
            "internal_service": {"loader": _loader(int(trials[i]))},
            "external_services": [{"seq_len": len(g), "services": [names[c] for c in g],
                                   "probabilities": {names[c]: prob[(i, c)] for c in g if prob[(i, c)] < 1.0}}
                                  for g in groups],
            "replicas": int(replicas[i]),
            "cpu-requests": shape.cpu_requests[int(rng.integers(len(shape.cpu_requests)))],
            "memory-requests": shape.memory_requests[int(rng.integers(len(shape.memory_requests)))],
        }
        for g in out[names[i]]["external_services"]:
            if not g["probabilities"]:
                del g["probabilities"]
    description = (f"generated (harness.generators.callgraph, seed {seed}): {services} services, "
                   f"{len(hot)} hot spots, {pods} pods; Alibaba-shaped call graph")
    return {"name": name, "description": description, "gateway": names[0], "services": out}


def _hot_spot(rng: np.random.Generator, hot: list[int], n_hot: int, calls: list[list[int]], zipf: float) -> int:
    """A hot spot by popularity; a new one while there are fewer than ``n_hot`` and the draw
    falls past the existing ones."""
    weights = np.arange(1, n_hot + 1, dtype=float) ** -zipf
    rank = int(rng.choice(n_hot, p=weights / weights.sum()))
    if rank < len(hot):
        return hot[rank]
    calls.append([])
    hot.append(len(calls) - 1)
    return hot[-1]


def _probabilities(rng: np.random.Generator, calls: list[list[int]], branching: float) -> dict[tuple[int, int], float]:
    """Each call's probability: a service with k callees makes each with about branching / k
    (drawn within ±50 %, at most 1), so it makes ``branching`` calls per request on average."""
    out = {}
    for i, cs in enumerate(calls):
        for c in cs:
            out[(i, c)] = round(float(min(1.0, branching / len(cs) * rng.uniform(0.5, 1.5))), 3)
    return out


def _visits(calls: list[list[int]], prob: dict[tuple[int, int], float], services: int, root: int = 0) -> np.ndarray:
    """Expected visits of each service per request at ``root`` (callers before callees)."""
    order = _topological(calls)
    v = np.zeros(services)
    v[root] = 1.0
    for i in order:
        for c in calls[i]:
            v[c] += v[i] * prob[(i, c)]
    return v


def _topological(calls: list[list[int]]) -> list[int]:
    indeg = [0] * len(calls)
    for cs in calls:
        for c in cs:
            indeg[c] += 1
    ready = [i for i, d in enumerate(indeg) if d == 0]
    out = []
    while ready:
        i = ready.pop()
        out.append(i)
        for c in calls[i]:
            indeg[c] -= 1
            if indeg[c] == 0:
                ready.append(c)
    return out


def _replicas(demand: np.ndarray, pods: int) -> np.ndarray:
    """One replica each, the other pods by share of the demand (largest remainders)."""
    r = np.ones(len(demand), dtype=int)
    extra = pods - len(demand)
    if extra > 0:
        want = demand / demand.sum() * extra
        r += np.floor(want).astype(int)
        left = extra - int(np.floor(want).sum())
        r[np.argsort(-(want - np.floor(want)), kind="stable")[:left]] += 1
    return r


def _loader(trials: int) -> dict:
    """The shipped Chain's loader (workloads/chain.json), its CPU stress repeated ``trials`` times."""
    return {"cpu_stress": {"run": True, "range_complexity": [200, 200], "thread_pool_size": 1, "trials": trials},
            "memory_stress": {"run": True, "memory_size": 1000, "memory_io": 1000},
            "disk_stress": {"run": True, "tmp_file_name": "mubtestfile.txt", "disk_write_block_count": 1,
                            "disk_write_block_size": 1024},
            "sleep_stress": {"run": False, "sleep_time": 0.01}, "mean_response_size": 1}


def _graph(doc: dict) -> tuple[list[str], dict[str, int], list[list[int]]]:
    """A (wrapped) workmodel's services, their indices and each one's callees (indices)."""
    names = list(doc["services"])
    index = {n: i for i, n in enumerate(names)}
    calls = [[index[c] for g in doc["services"][n].get("external_services", []) for c in g["services"]] for n in names]
    return names, index, calls


def visits(doc: dict) -> dict[str, float]:
    """Each service's expected visits per request at the gateway, from a (wrapped) workmodel's
    call probabilities and groups (a group calling seq_len of its k services: seq_len / k each)."""
    return _visits_of(doc, *_graph(doc))


def _visits_of(doc: dict, names: list[str], index: dict[str, int], calls: list[list[int]]) -> dict[str, float]:
    prob = {(index[n], index[c]): g.get("probabilities", {}).get(c, 1.0) * min(g["seq_len"], len(g["services"]))
            / len(g["services"]) for n in names for g in doc["services"][n].get("external_services", [])
            for c in g["services"]}
    return dict(zip(names, _visits(calls, prob, len(names), index[doc["gateway"]]).tolist()))


def stats(doc: dict) -> dict:
    """What a (wrapped) workmodel's call graph is: services, calls, the share of callers with 5 or
    more callees, of services with an in-degree of one (of those called), the largest in-degree,
    the depth (longest call chain from the gateway), and the expected services one request visits."""
    names, index, calls = _graph(doc)
    indeg = np.zeros(len(names), dtype=int)
    for cs in calls:
        for c in cs:
            indeg[c] += 1
    callers = [len(cs) for cs in calls if cs]
    depth = [0] * len(names)
    for i in reversed(_topological(calls)):
        depth[i] = 1 + max((depth[c] for c in calls[i]), default=-1)
    called = indeg[indeg > 0]
    return {"services": len(names), "calls": int(sum(len(cs) for cs in calls)),
            "callers": len(callers), "mean_fanout": float(np.mean(callers)) if callers else 0.0,
            "fanout_5_or_more": float(np.mean([k >= 5 for k in callers])) if callers else 0.0,
            "max_fanout": max(callers, default=0),
            "in_degree_one": float(np.mean(called == 1)) if len(called) else 0.0,
            "max_in_degree": int(indeg.max()), "depth": int(depth[index[doc["gateway"]]]),
            "visits_per_request": float(sum(_visits_of(doc, names, index, calls).values())),
            "pods": int(sum(s.get("replicas", 1) for s in doc["services"].values()))}
