"""KubeDSM (paper 004): batch scheduling and edge↔cloud migrations that keep each service's share
of pods on the edge as close as possible to the share it was promised.

- **place** (immediateSchedule): new pods in batches of ``batch`` (the code's 10). makeDecision
  picks which of them go to the edge: the sub-batch with the best total QoS (eq. 1; the code's QoS
  or the paper's F, :mod:`kubedsm_qos`) among those *match* can really fit on the edge nodes —
  every sub-batch at once, exactly (:mod:`kubedsm_match`; the authors' code checks only the summed
  room and sends to the cloud whatever its later match cannot fit). Ties: the better-packed edge.
  The rest go to the cloud (first fit, biggest cloud node first). No migrations here.
- **plan** (suggest, every rescheduler round): up to ``max_cloud_offload`` (M_C2E) cloud pods by
  ΔQoS / size (eq. 10; size = (cpu / M_cpu)·(mem / M_mem), the code's form of eq. 11; never a
  service with one pod); then makeDecision *with migrations* over sub-sets of them: for each,
  freeEdgeAsNeeded offloads edge pods to the cloud by the smallest QoS loss per unit size (eq. 12)
  until the summed room suffices, and reorderEdge re-matches up to ``max_migrations`` (M_ER) edge
  pods when the arrivals do not all fit as the edge is, keeping what fits most of them and then
  packs the edge best. The best total QoS wins; ties go
  to fewer pods moved (eq. 9's second objective). The moves are ordered make-before-break
  (``ClusterView.moves_to``: a swap between full nodes steps aside through the cloud, as the
  paper's §5.3 describes).
- The code's rules: never migrate a service with one running pod, never move all of a service's
  running pods at once. μBench's placement constraints (node_affinity, pod_antiaffinity) bound
  what the match may put on each node.

Variants (§6.3; the repository's PDF names them): original (M_C2E 5, M_ER 3), midmig (2, 1),
nocloudoffload (0, 3), noedgemig (5, 0).

Deviations from the authors' code, each a bug fix or a sharper reading, said here once:
makeDecision checks per-node room with the exact match (above); the reorder runs only to make
room for arrivals (the code also runs it to pack tighter when they fit) and compares one measure
throughout (Σ over edge nodes of the node value; the code compares a sum over *free* room with one
over used room); "the summed room suffices" means in every resource.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from harness.policies import register
from harness.policies.contract import Ability, ClusterView, Move, PendingPod, Policy
from harness.families.kubedsm.match import Match
from harness.families.kubedsm.qos import PaperQoS, code_qos, qos_array
from harness.spec.args import arg

VARIANTS = {"original": (5, 3), "midmig": (2, 1), "nocloudoffload": (0, 3), "noedgemig": (5, 0)}
# the QoS scenarios of the paper's Fig. 11 (promised edge shares of deployments A-D; services a-d)
QOS_SCENARIOS = {"all-one": {}, "all-half": {"a": 0.5, "b": 0.5, "c": 0.5, "d": 0.5},
                 "ca": {"a": 0.5, "b": 0.1, "c": 1.0, "d": 0.1}, "respect-d": {"a": 0.1, "b": 0.1, "c": 0.1, "d": 0.5}}


@dataclass
class KubeDSMArgs:
    variant: str = arg("original", "M_C2E and M_ER together: " + ", ".join(f"{k} {v}" for k, v in VARIANTS.items()))
    max_cloud_offload: int = arg(-1, "M_C2E: cloud pods brought to the edge per suggestion (-1: the variant's)")
    max_migrations: int = arg(-1, "M_ER: edge pods re-matched per suggestion (-1: the variant's)")
    batch: int = arg(10, "new pods decided together (the code's batch_size)")
    qos: str = arg("code", "QoS form: code (0.99 at the promise, 0.8·sqrt below) or paper (eq. 3, alpha/beta/gamma)")
    alpha: float = arg(1.0, "paper QoS: slope below the promise (chosen: the unit)")
    beta: float = arg(0.1, "paper QoS: slope above it (chosen: a tenth of alpha)")
    gamma: float = arg(10.0, "paper QoS: the step at the promise (chosen: 10 alpha, '<<' as an order of magnitude)")
    promised: str = arg("all-one", "promised edge shares: a Fig. 11 scenario (" + ", ".join(QOS_SCENARIOS)
                        + ") or service=share,... (others 1)")

    def validate(self) -> None:
        if self.variant not in VARIANTS:
            raise ValueError(f"unknown variant {self.variant!r} (known: {', '.join(VARIANTS)})")
        if self.qos not in ("code", "paper"):
            raise ValueError(f"qos must be code or paper, got {self.qos!r}")
        if self.qos == "paper":
            PaperQoS(self.alpha, self.beta, self.gamma).validate()
        if not 1 <= self.batch <= 20:
            raise ValueError(f"batch must be 1 to 20 pods, got {self.batch}")
        promised_shares(self.promised)

    def limits(self) -> tuple[int, int]:
        c2e, er = VARIANTS[self.variant]
        return (c2e if self.max_cloud_offload < 0 else self.max_cloud_offload,
                er if self.max_migrations < 0 else self.max_migrations)


def promised_shares(text: str) -> dict[str, float]:
    if text in QOS_SCENARIOS:
        return dict(QOS_SCENARIOS[text])
    out = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, _, value = part.partition("=")
        try:
            share = float(value)
        except ValueError:
            raise ValueError(f"promised: expected service=share, got {part!r}") from None
        if not 0 < share <= 1:
            raise ValueError(f"promised share of {name} must be in (0, 1], got {share}")
        out[name.strip()] = share
    return out


class Edge:
    """The cluster as KubeDSM sees it: edge nodes (up, role edge) with their use, the cloud nodes,
    and per service its pods on each edge node and on the cloud."""

    def __init__(self, view: ClusterView):
        self.view = view
        self.services = list(view.app.services)
        self.sidx = {s: k for k, s in enumerate(self.services)}
        self.edge = [i for i, n in enumerate(view.nodes) if n.role == "edge" and n.up]
        self.cloud = sorted((i for i, n in enumerate(view.nodes) if n.role != "edge" and n.up),
                            key=lambda i: (-view.nodes[i].cpus, view.nodes[i].name))
        self.cap = np.array([[view.nodes[i].cpus, view.nodes[i].memory_mib] for i in self.edge]).reshape(-1, 2)
        self.used = np.array([[view.nodes[i].used_cpu, view.nodes[i].used_memory_mib] for i in self.edge]).reshape(-1, 2)
        self.req = np.array([view.request(s) for s in self.services], float)
        # per service: pods on each edge node (E x S), and in total
        self.on_edge = np.zeros((len(self.edge), len(self.services)), np.int64)
        self.total = np.zeros(len(self.services), np.int64)
        where = self._edge_at = {view.nodes[i].name: e for e, i in enumerate(self.edge)}
        for p in view.pods:
            k = self.sidx[p.service]
            self.total[k] += 1
            if p.node in where:
                self.on_edge[where[p.node], k] += 1
        # the placement constraints on the edge: may the service run there, must its pods spread
        self.allowed = np.ones((len(self.edge), len(self.services)), bool)  # app.may_run_on, per service
        for k, s in enumerate(self.services):
            if view.app.services[s].node_affinity is not None:
                self.allowed[:, k] = [view.app.may_run_on(s, view.nodes[i].name) for i in self.edge]
        self.spreads = np.array([view.app.spreads(s) for s in self.services], bool)
        top = self.cap.max(axis=0) if len(self.edge) else np.ones(2)
        self.size = (self.req[:, 0] / top[0]) * (self.req[:, 1] / top[1])  # eq. 11, the code's form

    def add(self, service: str, node: str) -> None:
        """A pod of ``service`` placed on ``node``: this Edge as ``Edge(view.with_pod(...))`` would be."""
        k = self.sidx[service]
        self.total[k] += 1
        e = self._edge_at.get(node)
        if e is not None:
            self.on_edge[e, k] += 1
            self.used[e] += self.req[k]

    def key(self) -> bytes:
        """Everything KubeDSM's decisions read, as bytes: equal keys, equal decisions."""
        return b"|".join(np.ascontiguousarray(a).tobytes() for a in (
            np.array(self.edge), np.array(self.cloud), self.cap, self.used, self.req, self.on_edge, self.total,
            self.allowed, self.spreads))

    def limit(self, on_edge: np.ndarray) -> np.ndarray:
        """(E × S) how many more pods of each service each edge node may take, beside ``on_edge``."""
        free = np.where(self.spreads[None, :], np.maximum(0, 1 - on_edge), 1 << 30)
        return np.where(self.allowed, free, 0)


class KubeDSMCore:
    """The algorithms, on an :class:`Edge`; no state of their own between calls."""

    def __init__(self, args: KubeDSMArgs):
        self.args = args
        self.promised = promised_shares(args.promised)
        self.qos_one = code_qos if args.qos == "code" else PaperQoS(args.alpha, args.beta, args.gamma)
        self.max_c2e, self.max_er = args.limits()

    # ---------------------------------------------------------------- QoS (eqs. 1-5)
    def qos(self, st: Edge, edge_count: np.ndarray, total: np.ndarray) -> float:
        return sum(self.qos_one(e / n, self.promised.get(s, 1.0)) for s, e, n in zip(st.services, edge_count, total) if n)

    def qos_many(self, st: Edge, edge_counts: np.ndarray, total: np.ndarray) -> np.ndarray:
        """``qos`` of each row of ``edge_counts`` (C × S) at once: the same terms, added service by
        service in the same order (the batch's every sub-vector is a row)."""
        acc = np.zeros(len(edge_counts))
        for k, s in enumerate(st.services):
            if total[k]:
                acc = acc + qos_array(self.qos_one, edge_counts[:, k] / total[k], self.promised.get(s, 1.0))
        return acc

    def _delta(self, st: Edge, k: int, edge_count: np.ndarray, step: int) -> float:
        n = st.total[k]
        q = self.promised.get(st.services[k], 1.0)
        return self.qos_one((edge_count[k] + step) / n, q) - self.qos_one(edge_count[k] / n, q)

    # ---------------------------------------------------------------- makeDecision, no migrations
    def decide_batch(self, st: Edge, batch: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(how many of the batch go to the edge per service, the E × S arrangement)."""
        total = st.total + batch
        edge_now = st.on_edge.sum(axis=0)
        m = Match(batch, st.req, st.used, st.cap, st.limit(st.on_edge))
        best, best_key = 0, None
        fits = np.flatnonzero(m.fits())
        for c, q in zip(fits, self.qos_many(st, edge_now + m.vectors[fits], total).tolist()):
            key = (round(q, 12), m.value[c])
            if best_key is None or key > best_key:
                best, best_key = c, key
        return m.vectors[best], m.nodes(best)

    # ---------------------------------------------------------------- suggest (eq. 10)
    def cloud_candidates(self, st: Edge) -> np.ndarray:
        """Per service, how many cloud pods to offer the edge: up to M_C2E by ΔQoS / size."""
        edge_count = st.on_edge.sum(axis=0).copy()
        on_cloud = st.total - edge_count
        free = (st.cap - st.used).sum(axis=0)
        take = np.zeros(len(st.services), np.int64)
        while take.sum() < self.max_c2e:
            scores = [(self._delta(st, k, edge_count, 1) / st.size[k], k) for k in range(len(st.services))
                      if on_cloud[k] - take[k] > 0 and take[k] + 1 < st.total[k]  # one pod of it stays put
                      and np.all(st.req[k] <= free + 1e-9)]
            if not scores:
                break
            score, k = max(scores)
            if score < 0:
                break
            take[k] += 1
            edge_count[k] += 1
            free = free - st.req[k]
        return take

    def free_edge(self, st: Edge, need: np.ndarray) -> np.ndarray:
        """freeEdgeAsNeeded (eq. 12): per (edge node, service), pods offloaded to the cloud, by the
        smallest QoS loss per unit size, until the edge's summed room covers ``need``."""
        short = need - (st.cap - st.used).sum(axis=0)
        freed = np.zeros_like(st.on_edge)
        if np.all(short <= 1e-9):
            return freed
        edge_count = st.on_edge.sum(axis=0).copy()
        got = np.zeros(2)
        while np.any(got < short - 1e-9):
            options = [(self._delta(st, k, edge_count, -1) / st.size[k], k) for k in range(len(st.services))
                       if edge_count[k] > 0 and freed[:, k].sum() + 1 < st.total[k]]  # keep one running pod
            if not options:
                break
            _, k = max(options)
            e = int(np.argmax(st.on_edge[:, k] - freed[:, k]))  # from the node holding most of them
            freed[e, k] += 1
            edge_count[k] -= 1
            got += st.req[k]
        return freed

    def reorder(self, st: Edge, used: np.ndarray, on_edge: np.ndarray, moving_from: np.ndarray,
                arrivals: np.ndarray) -> tuple[np.ndarray, int, float]:
        """reorderEdge with the arrivals' match: re-match up to M_ER edge pods (not all of a
        service's, none of a one-pod service's) together with ``arrivals`` (per service); keep what
        fits the most arrivals, then packs best. Returns (E × S arrangement after, arrivals placed,
        its value)."""
        def fit(taken: np.ndarray) -> tuple[np.ndarray, int, float]:
            base = used - taken @ st.req
            m = Match(taken.sum(axis=0) + arrivals, st.req, base, st.cap, st.limit(on_edge - taken))
            need = taken.sum(axis=0)
            best = None
            for c in np.flatnonzero(m.fits()):
                v = m.vectors[c]
                if np.any(v < need):
                    continue  # a moved pod would leave the edge: not a reorder
                key = (int((v - need).sum()), m.value[c])
                if best is None or key > best[0]:
                    best = (key, c)
            if best is None:
                return None
            (placed, value), c = best
            return on_edge - taken + m.nodes(c), placed, value

        result = fit(np.zeros_like(on_edge))
        if result is None:
            result = (on_edge.copy(), 0, -np.inf)
        if self.max_er == 0 or result[1] == arrivals.sum():
            return result  # every arrival fits as the edge is: reordering is for making room
        cells = [(e, k) for e in range(len(st.edge)) for k in range(len(st.services)) if on_edge[e, k]]
        for n in range(1, self.max_er + 1):
            for combo in itertools.combinations_with_replacement(cells, n):
                taken = np.zeros_like(on_edge)
                for e, k in combo:
                    taken[e, k] += 1
                if np.any(taken > on_edge):
                    continue
                moving = moving_from + taken.sum(axis=0)
                if np.any((moving >= st.total) & (moving > 0)):
                    continue  # never all of a service's running pods (nor the one pod of a service)
                r = fit(taken)
                if r is not None and (r[1], r[2]) > (result[1], result[2] + 1e-12):
                    result = r
        return result

    def suggest(self, st: Edge) -> np.ndarray | None:
        """The E × S arrangement of edge pods KubeDSM wants, or None to stay as it is."""
        offer = self.cloud_candidates(st)
        edge_now = st.on_edge.sum(axis=0)
        best_key, best = (round(self.qos(st, edge_now, st.total), 12), 0), None
        for sub in itertools.product(*(range(int(n) + 1) for n in offer)):
            sub = np.array(sub, np.int64)
            if not sub.any():
                continue
            need = sub @ st.req
            if np.any(need > st.cap.sum(axis=0) + 1e-9):
                continue
            freed = self.free_edge(st, need)
            used = st.used - freed @ st.req
            arranged, placed, _ = self.reorder(st, used, st.on_edge - freed, freed.sum(axis=0), sub)
            edge_after = arranged.sum(axis=0)
            moved = int(freed.sum() + placed + np.abs(arranged - (st.on_edge - freed)).sum() // 2)
            key = (round(self.qos(st, edge_after, st.total), 12), -moved)
            if key > best_key:
                best_key, best = key, arranged
        return best


def target_placement(view: ClusterView, st: Edge, arranged: np.ndarray) -> dict[str, list[str]]:
    """Service -> one node per pod: ``arranged`` on the edge, the rest on the cloud (where they
    are, or the first cloud node with room)."""
    out = {}
    for k, s in enumerate(st.services):
        pods = view.pods_of(s)
        nodes = [view.nodes[st.edge[e]].name for e in range(len(st.edge)) for _ in range(int(arranged[e, k]))]
        rest = len(pods) - len(nodes)
        on_cloud = [p.node for p in pods if view.node(p.node).role != "edge"]
        fallback = view.nodes[st.cloud[0]].name if st.cloud else None
        nodes += (on_cloud + [fallback] * rest)[:rest]
        out[s] = nodes
    return out


@register
class KubeDSM(Policy):
    name = "kubedsm"
    description = "KubeDSM (paper 004): batch placement by QoS of the edge share, cloud->edge and edge reorder migrations"
    Args = KubeDSMArgs
    abilities = frozenset({Ability.PLACE, Ability.PLAN})

    def __init__(self, args: KubeDSMArgs):
        super().__init__(args)
        self.core = KubeDSMCore(args)
        self._suggested: dict[bytes, np.ndarray | None] = {}  # KubeDSM is deterministic: a cluster seen is answered again

    def place(self, view: ClusterView, pods) -> list[str | None]:
        out: list[str | None] = [None] * len(pods)
        order = list(range(len(pods)))
        st = Edge(view)  # kept up to date pod by pod (Edge.add), not read again from the view
        for start in range(0, len(order), self.args.batch):
            chunk = order[start:start + self.args.batch]
            batch = np.zeros(len(st.services), np.int64)
            for i in chunk:
                batch[st.sidx[pods[i].service]] += 1
            _, arranged = self.core.decide_batch(st, batch)
            slots = {s: [view.nodes[st.edge[e]].name for e in np.flatnonzero(arranged[:, k])
                         for _ in range(int(arranged[e, k]))] for k, s in enumerate(st.services)}
            for i in chunk:
                pod: PendingPod = pods[i]
                node = slots[pod.service].pop(0) if slots[pod.service] else self._cloud(view, st, pod)
                if node is not None:
                    view = view.with_pod(pod, node)
                    st.add(pod.service, node)
                out[i] = node
        return out

    @staticmethod
    def _cloud(view: ClusterView, st: Edge, pod: PendingPod) -> str | None:
        ok = view.feasible(pod)
        return next((view.nodes[i].name for i in st.cloud if ok[i]), None)

    def plan(self, view: ClusterView) -> list[Move]:
        st = Edge(view)
        if not st.edge or not st.cloud:
            return []  # a cluster without both sides has nothing to migrate between
        key = st.key()
        if key not in self._suggested:
            if len(self._suggested) > 512:
                self._suggested.clear()
            self._suggested[key] = self.core.suggest(st)
        arranged = self._suggested[key]
        if arranged is None:
            return []
        return view.moves_to(target_placement(view, st, arranged))
