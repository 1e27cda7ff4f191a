"""The policy contract: what a policy is, what it sees, and what it answers.

A policy is a class with a ``name``, a typed ``Args`` dataclass and declared ``abilities``:

- ``place``: given the cluster and the pods waiting to be placed (one or a batch), a node for
  each, or ``None`` to leave that pod pending (rejected) when nothing fits. Initial deployment,
  self-healing, autoscaling and request streams all go through it.
- ``plan``: given the cluster as it is, a list of moves (one for REACH or RSDQL, several for
  ``optimal`` or KubeDSM); an empty list means idle. The one move loop
  (:mod:`harness.rescheduler.loop`) applies them, make-before-break live, in the simulator's
  state in ``harness sweep``, and asks again when the plan is used up.
- ``train``: a learned policy also has ``train`` and a model file (see
  :class:`harness.policies.learned.CEEnvPolicy`).

What a policy sees is a :class:`ClusterView`: read-only nodes (tier, capacity, what is used),
pods (service, node, requests), the app's call graph, and the simulator's latency model built
from the profile and the RTTs. A policy trained in CEEnv turns the view into CEEnv's arrays itself
(:func:`harness.policies.ceenv_state.to_ceenv`); another may build any other model of the world
from the same view.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import ClassVar, Sequence

import numpy as np

from harness.errors import UserError
from harness.sim.latency import LatencyModel
from harness.spec.app import App


class Ability(str, enum.Enum):
    PLACE = "place"
    PLAN = "plan"
    TRAIN = "train"


@dataclass(frozen=True)
class NodeView:
    name: str
    type: str
    tier: str  # as the inventory names it (near-edge, fog, ...)
    cpus: float  # logical cores the scheduler counts
    memory_mib: float
    up: bool
    used_cpu: float  # by the listed pods and by anything else (background load)
    used_memory_mib: float
    background_cpu: float = 0.0  # the part of used_cpu that is not the listed pods
    background_memory_mib: float = 0.0
    role: str = ""  # cloud | edge: what the tier is for
    site: str | None = None
    cost: float = 0.0  # per hour
    gpus: float = 0.0
    pod_cost: float = 0.0  # paper 003's o_v: what hosting one pod here costs
    data_cost: float = 0.0  # paper 003's n_v: per unit of a pod's data size

    @property
    def free_cpu(self) -> float:
        return self.cpus - self.used_cpu

    @property
    def free_memory_mib(self) -> float:
        return self.memory_mib - self.used_memory_mib


@dataclass(frozen=True)
class PodView:
    name: str
    service: str
    node: str
    cpu: float  # requested cores
    memory_mib: float


@dataclass(frozen=True)
class PendingPod:
    """A pod waiting for a node: a new replica, one lost with its node, or a scale-up."""

    service: str
    cpu: float
    memory_mib: float
    name: str = ""


@dataclass(frozen=True)
class Move:
    pod: str  # a PodView's name
    node: str


class CannotPlan(Exception):
    """The policy cannot handle this cluster (e.g. an exact search beyond its size limit)."""


class BadOutput(Exception):
    """A policy returned what its contract does not allow: counted as a policy error, like a raise."""


def checked_plan(plan, view: "ClusterView") -> list[Move]:
    """What ``plan()`` returned, if it is a list of Moves (of strings); else BadOutput naming the
    first thing that is not."""
    try:
        moves = list(plan)
    except TypeError:
        raise BadOutput(f"plan() returned {type(plan).__name__} {plan!r:.60}, not a list of Move") from None
    for m in moves:
        if not isinstance(m, Move) or not isinstance(m.pod, str) or not isinstance(m.node, str):
            raise BadOutput(f"plan() returned {type(m).__name__} {m!r:.60} among its moves, not a Move(pod, node)")
    return moves


def checked_place(nodes, view: "ClusterView", asked: int) -> list[str | None]:
    """What ``place()`` returned, if it is one node name of ``view`` (or None) per pod asked; else
    BadOutput naming the first thing that is not."""
    try:
        out = list(nodes)
    except TypeError:
        raise BadOutput(f"place() returned {type(nodes).__name__} {nodes!r:.60}, not a list of node names") from None
    if len(out) != asked:
        raise BadOutput(f"place() returned {len(out)} nodes for {asked} pods")
    names = {n.name for n in view.nodes}
    for x in out:
        if x is not None and (not isinstance(x, str) or x not in names):
            raise BadOutput(f"place() returned {type(x).__name__} {x!r:.60}, not a node of this cluster or None")
    return out


EPS = 1e-9  # capacity comparisons: a pod that exactly fills a node fits


@dataclass(frozen=True, eq=False)
class ClusterView:
    """The cluster as a policy sees it; never changed in place (``with_pod`` and ``after`` return
    new views). ``nodes`` are the nodes pods may run on (clients excluded), in the latency
    model's order; arrays (``cap_cpu``, ``used_cpu``, ...) follow the same order."""

    app: App
    model: LatencyModel
    nodes: tuple[NodeView, ...]
    pods: tuple[PodView, ...]
    # the app's load now, when known: requests/s of open-loop load, closed-loop users; what a
    # load-aware policy reads (the latency model itself has no load)
    rate: float | None = None
    users: int | None = None
    _index: dict[str, int] = field(init=False, repr=False)
    _cache: dict = field(init=False, repr=False)  # derived values (counts, latency), computed once

    def __post_init__(self):
        object.__setattr__(self, "_index", {n.name: i for i, n in enumerate(self.nodes)})
        object.__setattr__(self, "_cache", {})

    # ------------------------------------------------------------ building
    @classmethod
    def build(cls, app: App, model: LatencyModel, up: Sequence[bool], pods: Sequence[PodView],
              background_cpu: Sequence[float] | None = None, background_memory_mib: Sequence[float] | None = None,
              rate: float | None = None, users: int | None = None, leaving: Sequence[PodView] = ()):
        """A view from the pods and what else uses each node (background load, sim scenarios).
        ``leaving``: pods on their way out (retired, terminating), no replicas any more, whose
        requests stay on their nodes as background until they are gone — as kube-scheduler counts
        a terminating pod's."""
        topo = model.topo
        n = len(topo.nodes)
        index = {name: i for i, name in enumerate(topo.nodes)}
        bg_cpu = np.array(background_cpu if background_cpu is not None else np.zeros(n), float)
        bg_mem = np.array(background_memory_mib if background_memory_mib is not None else np.zeros(n), float)
        for p in leaving:
            bg_cpu[index[p.node]] += p.cpu
            bg_mem[index[p.node]] += p.memory_mib
        cpu, mem = bg_cpu.copy(), bg_mem.copy()
        for p in pods:  # one addition at a time, in pod order: the sums the simulator makes
            i = index[p.node]
            cpu[i] += p.cpu
            mem[i] += p.memory_mib
        floats = lambda a: np.asarray(a, float).tolist()  # noqa: E731 (each number as float() gives it, at once)
        nodes = tuple(map(NodeView, topo.nodes, topo.node_types, topo.tiers, floats(topo.cpus), floats(topo.memory_mib),
                          [bool(u) for u in up], floats(cpu), floats(mem), floats(bg_cpu), floats(bg_mem), topo.roles,
                          topo.sites, floats(topo.costs), floats(topo.gpus), floats(topo.pod_costs),
                          floats(topo.data_costs)))
        return cls(app, model, nodes, tuple(pods), rate, users)

    # ------------------------------------------------------------ lookups
    def index(self, node: str) -> int:
        return self._index[node]

    def node(self, name: str) -> NodeView:
        return self.nodes[self._index[name]]

    def pod(self, name: str) -> PodView | None:
        for p in self.pods:
            if p.name == name:
                return p
        return None

    def pods_of(self, service: str) -> list[PodView]:
        return [p for p in self.pods if p.service == service]

    def _column(self, attr: str) -> np.ndarray:
        """(N,) one NodeView field over the nodes, built once per view (read-only)."""
        if attr not in self._cache:
            a = np.array([getattr(n, attr) for n in self.nodes])
            a.flags.writeable = False
            self._cache[attr] = a
        return self._cache[attr]

    cap_cpu = property(lambda self: self._column("cpus"))
    cap_memory_mib = property(lambda self: self._column("memory_mib"))
    used_cpu = property(lambda self: self._column("used_cpu"))
    used_memory_mib = property(lambda self: self._column("used_memory_mib"))
    background_cpu = property(lambda self: self._column("background_cpu"))
    background_memory_mib = property(lambda self: self._column("background_memory_mib"))
    up = property(lambda self: self._column("up"))

    @property
    def rtt(self) -> np.ndarray:
        """(N, N) round-trip ms between the nodes (dense: ``model.topo`` holds them per group of nodes)."""
        return self.model.topo.dense_rtt()

    @property
    def execution_ms(self) -> np.ndarray:
        """(S, N) the profile's execution time of each service (``model.services`` order) on each
        node's type: what a queueing or any other model of the world starts from."""
        return self.model.E

    @property
    def user_rtt(self) -> np.ndarray:
        """(N,) round-trip ms between the user (the client nodes) and each node."""
        return self.model.topo.user_rtt

    def request(self, service: str) -> tuple[float, float]:
        """(cores, MiB) a pod of ``service`` requests."""
        return self.app.cpu_request(service), self.app.memory_request(service)

    def pending(self, service: str, name: str = "") -> PendingPod:
        cpu, mem = self.request(service)
        return PendingPod(service, cpu, mem, name)

    # ------------------------------------------------------------ rules
    def fits(self, cpu: float, memory_mib: float) -> np.ndarray:
        """(N,) bool: nodes that are up and have room for a pod with these requests."""
        return self.up & (self.cap_cpu - self.used_cpu >= cpu - EPS) & \
            (self.cap_memory_mib - self.used_memory_mib >= memory_mib - EPS)

    def allowed(self, service: str, moving: str | None = None) -> np.ndarray:
        """(N,) bool: nodes the service's constraints permit (node_affinity; with pod_antiaffinity,
        none holding another of its pods; ``moving``: the pod being moved, which does not count)."""
        affinity = self.app.services[service].node_affinity  # app.may_run_on, for every node at once
        ok = np.ones(len(self.nodes), bool) if affinity is None else np.array([n.name in affinity for n in self.nodes])
        if self.app.spreads(service):
            for p in self.pods:
                if p.service == service and p.name != moving:
                    ok[self._index[p.node]] = False
        return ok

    def feasible(self, pod: "PendingPod | PodView") -> np.ndarray:
        """(N,) bool: where this pod may go now: up, with room, and within its constraints."""
        moving = pod.name if isinstance(pod, PodView) else None
        return self.fits(pod.cpu, pod.memory_mib) & self.allowed(pod.service, moving)

    def valid(self, move: Move) -> bool:
        """A move the cluster can make: the pod exists, the node is another, up, with room, allowed."""
        pod = self.pod(move.pod)
        if pod is None or move.node not in self._index or move.node == pod.node:
            return False
        return bool(self.feasible(pod)[self._index[move.node]])

    # ------------------------------------------------------------ derived views
    def with_pod(self, pod: PendingPod, node: str, name: str | None = None) -> "ClusterView":
        """This view with ``pod`` placed on ``node`` (placing a batch one pod after another)."""
        placed = PodView(name or pod.name or f"{pod.service}#{len(self.pods)}", pod.service, node, pod.cpu, pod.memory_mib)
        nodes = list(self.nodes)
        i = self._index[node]
        nodes[i] = replace(nodes[i], used_cpu=nodes[i].used_cpu + pod.cpu,
                           used_memory_mib=nodes[i].used_memory_mib + pod.memory_mib)
        return self._alike(tuple(nodes), self.pods + (placed,))

    def _alike(self, nodes: tuple[NodeView, ...], pods: tuple[PodView, ...]) -> "ClusterView":
        """A view of the same nodes (names and order) with other use and pods: the node index is
        shared, not built again (a batch placed pod by pod on a thousand nodes)."""
        view = object.__new__(ClusterView)
        for name, value in (("app", self.app), ("model", self.model), ("nodes", nodes), ("pods", pods),
                            ("rate", self.rate), ("users", self.users), ("_index", self._index), ("_cache", {})):
            object.__setattr__(view, name, value)
        return view

    def after(self, move: Move) -> "ClusterView":
        """This view with the move made (the pod keeps its name)."""
        pod = self.pod(move.pod)
        nodes = list(self.nodes)
        i, j = self._index[pod.node], self._index[move.node]
        nodes[i] = replace(nodes[i], used_cpu=nodes[i].used_cpu - pod.cpu,
                           used_memory_mib=nodes[i].used_memory_mib - pod.memory_mib)
        nodes[j] = replace(nodes[j], used_cpu=nodes[j].used_cpu + pod.cpu,
                           used_memory_mib=nodes[j].used_memory_mib + pod.memory_mib)
        pods = tuple(replace(p, node=move.node) if p.name == move.pod else p for p in self.pods)
        return self._alike(tuple(nodes), pods)

    # ------------------------------------------------------------ the model
    def counts(self) -> np.ndarray:
        """(S, N) replicas of each service (the model's order) on each node."""
        if "counts" not in self._cache:
            X = np.zeros((self.model.S, len(self.nodes)))
            for p in self.pods:
                if p.service in self.model.index:
                    X[self.model.index[p.service], self._index[p.node]] += 1
            X.flags.writeable = False
            self._cache["counts"] = X
        return self._cache["counts"]

    def key(self) -> bytes:
        """What identifies a placement (which pod of a service is where does not matter)."""
        return self.counts().astype(np.int16).tobytes()

    def latency_ms(self) -> float | None:
        """The model's end-to-end latency; None while a service has no pod."""
        if "latency" not in self._cache:
            X = self.counts()
            self._cache["latency"] = None if (X.sum(axis=1) == 0).any() else float(self.model.latency(X)[0])
        return self._cache["latency"]

    def after_all(self, moves: Sequence[Move]) -> "ClusterView":
        """This view with every move made, in order."""
        view = self
        for m in moves:
            view = view.after(m)
        return view

    def placeable(self) -> np.ndarray:
        """(S, N) bool, services in the model's order: the node is up and the service's node
        affinity permits it (anti-affinity depends on where its other pods are: ``allowed``)."""
        if "placeable" not in self._cache:
            a = np.array([[bool(self.up[n]) and self.app.may_run_on(s, node.name) for n, node in enumerate(self.nodes)]
                          for s in self.model.services])
            a.flags.writeable = False
            self._cache["placeable"] = a
        return self._cache["placeable"]

    def moves_to(self, target: dict[str, list[str]]) -> list[Move]:
        """Moves that turn this placement into ``target`` (service -> one node per pod), in an
        order in which each is valid when its turn comes (make-before-break: the target needs room
        while the pod still runs). A pod already on one of its service's target nodes stays. When
        every remaining move waits for another (two full nodes swapping pods), one pod steps aside
        to a node with room first. Moves that still cannot be ordered come last, as they are."""
        wanted = []
        for service, nodes in target.items():
            pods = self.pods_of(service)
            if len(pods) != len(nodes):
                raise ValueError(f"{service}: {len(nodes)} target nodes for {len(pods)} pods")
            left = list(nodes)
            moving = []
            for p in pods:
                if p.node in left:
                    left.remove(p.node)
                else:
                    moving.append(p)
            wanted += [Move(p.name, n) for p, n in zip(moving, left)]
        out, view = [], self
        for _ in range(3 * len(wanted) + 1):
            if not wanted:
                break
            k = next((i for i, m in enumerate(wanted) if view.valid(m)), None)
            if k is not None:
                move = wanted.pop(k)
            else:  # deadlock: the first waiting pod that can steps aside to a node it may use now
                aside = next((a for a in (view.step_aside(m) for m in wanted) if a is not None), None)
                if aside is None:
                    break
                move = aside
            out.append(move)
            view = view.after(move)
        return out + wanted

    def step_aside(self, waiting: Move) -> Move | None:
        """A move of ``waiting``'s pod to a node it may use now, other than where it is and where it
        waits to go (None if there is none). A pod on the cloud waiting for a full edge node may
        have nowhere to go while a pod on that node can make room through the cloud."""
        pod = self.pod(waiting.pod)
        room = self.feasible(pod)
        room[self.index(pod.node)] = room[self.index(waiting.node)] = False
        return Move(pod.name, self.nodes[int(np.argmax(room))].name) if room.any() else None

    def placement(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {s: [] for s in self.app.services}
        for p in self.pods:
            out.setdefault(p.service, []).append(p.node)
        return out


class Policy:
    """Base class of every policy. Subclasses set the class attributes and override ``place``
    and/or ``plan`` as their abilities say; ``harness.policies.register`` checks that they do."""

    name: ClassVar[str]
    description: ClassVar[str] = ""
    Args: ClassVar[type]  # a dataclass; its fields are the policy's arguments
    abilities: ClassVar[frozenset[Ability]]
    # a rescheduler that cannot place names the policy that places its new pods
    placed_by: ClassVar[str] = "default"

    def __init__(self, args):
        self.args = args

    def place(self, view: ClusterView, pods: Sequence[PendingPod]) -> list[str | None]:
        raise NotImplementedError(f"{self.name} does not place pods")

    def plan(self, view: ClusterView) -> list[Move]:
        raise NotImplementedError(f"{self.name} does not reschedule")

    def check(self, view: ClusterView) -> None:
        """Refuse a cluster this policy cannot act on (a UserError), before a run starts."""

    @classmethod
    def unfit(cls, app: App) -> str | None:
        """Why this policy cannot act on ``app`` at all (its problem is another), or None: what a
        leaderboard lists as "ability does not fit" instead of playing the cell."""
        return None

    @classmethod
    def unfit_testbed(cls, inventory) -> str | None:
        """Why this policy cannot act on the testbed an ``Inventory`` describes, or None (as
        ``unfit``, for the testbed: HephaestusForge's placers need sites)."""
        return None

    @property
    def model_file(self) -> str | None:
        """The trained model this policy acts with, if any (recorded with every run)."""
        return getattr(self.args, "model", None)

    def can(self, ability: Ability) -> bool:
        return ability in self.abilities


class OneAtATime(Policy):
    """A placer that decides each pod alone, seeing the pods placed before it in the batch."""

    abilities = frozenset({Ability.PLACE})

    def choose(self, view: ClusterView, pod: PendingPod) -> str | None:
        raise NotImplementedError

    def place(self, view: ClusterView, pods: Sequence[PendingPod]) -> list[str | None]:
        out: list[str | None] = []
        for pod in pods:
            node = self.choose(view, pod)
            if node is not None:
                view = view.with_pod(pod, node)
            out.append(node)
        return out


@dataclass
class NoArgs:
    pass


def validate_args(policy: str, args) -> None:
    """An Args dataclass may check itself (``validate()`` raising ValueError): a user error."""
    check = getattr(args, "validate", None)
    if check is None:
        return
    try:
        check()
    except ValueError as exc:
        raise UserError(str(exc), field=f"policy {policy}") from None
