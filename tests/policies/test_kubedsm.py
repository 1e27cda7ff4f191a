"""KubeDSM (paper 004): the match is exact, makeDecision reaches eq. 9's best QoS, the code's
migration rules hold, and replica schedules played on harness's ground (``studies.kubedsm.workloads``)
are deterministic and fair."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from harness.policies import build
from harness.policies.contract import ClusterView, PodView
from harness.families.kubedsm.kubedsm import Edge, KubeDSMCore, KubeDSMArgs
from harness.families.kubedsm.match import Match, node_value
from studies.kubedsm.workloads import Ground, m_sigma_schedule

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def ground(tmp_path_factory):
    return Ground(tmp_path_factory.mktemp("kubedsm-runs"))


@pytest.fixture(scope="module")
def setting(ground):
    """Table 5's app and the authors' cluster as the paper models it (the cloud unlimited)."""
    view = ground.view()
    return view.app, view.model


def brute_match(counts, req, used, cap, limit=None):
    """Every way of putting each pod on a node or leaving it out: per sub-vector, the best value."""
    pods = [s for s, n in enumerate(counts) for _ in range(n)]
    best = {}
    E = len(cap)
    for where in itertools.product(range(E + 1), repeat=len(pods)):  # E = left out
        load = used.copy()
        taken = np.zeros(len(counts), int)
        for s, e in zip(pods, where):
            if e < E:
                load[e] += req[s]
                taken[s] += 1
        if np.any(load > cap + 1e-9):
            continue
        if limit is not None:
            per = np.zeros_like(limit)
            for s, e in zip(pods, where):
                if e < E:
                    per[e, s] += 1
            if np.any(per > limit):
                continue
        v = sum(node_value(load[e], cap[e]) for e in range(E))
        key = tuple(taken)
        best[key] = max(best.get(key, -np.inf), v)
    return best


@pytest.mark.parametrize("seed", range(12))
def test_match_is_exact_on_random_small_instances(seed):
    rng = np.random.default_rng(seed)
    S, E = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    counts = rng.integers(0, 3, S)
    if counts.sum() > 6:
        counts[0] = 0
    req = rng.integers(1, 4, (S, 2)).astype(float)
    cap = rng.integers(2, 7, (E, 2)).astype(float)
    used = np.floor(cap * rng.uniform(0, 0.5, (E, 2)))
    # placement constraints: some (node, service) pairs barred, some capped at one pod
    limit = rng.choice([0, 1, 99], (E, S), p=[0.2, 0.3, 0.5]) if seed % 2 else None
    m = Match(counts, req, used, cap, limit)
    truth = brute_match(counts, req, used, cap, limit)
    for c, vec in enumerate(m.vectors):
        key = tuple(int(x) for x in vec)
        if key in truth:
            assert m.value[c] == pytest.approx(truth[key]), key
            arr = m.nodes(c)
            assert (arr.sum(axis=0) == vec).all() and np.all(used + arr @ req <= cap + 1e-9)
        else:
            assert m.value[c] == -np.inf, key


def edge_counts(view: ClusterView) -> dict[str, tuple[int, int]]:
    """Service -> (pods on edge nodes, pods)."""
    out = {s: [0, 0] for s in view.app.services}
    for p in view.pods:
        out[p.service][1] += 1
        out[p.service][0] += view.node(p.node).role == "edge"
    return {s: (e, n) for s, (e, n) in out.items()}


def view_with(app, model, pods):
    return ClusterView.build(app, model, [True] * len(model.topo.nodes),
                             [PodView(f"{s}-{i}", s, n, app.cpu_request(s), app.memory_request(s))
                              for i, (s, n) in enumerate(pods)])


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("qos", ["code", "paper"])
def test_make_decision_reaches_the_best_qos_by_enumeration(setting, seed, qos):
    # eq. 9's first objective over every assignment of the new pods (edge node or cloud) that
    # respects each edge node's room (eq. 8), for up to 8 new pods
    app, model = setting
    rng = np.random.default_rng(seed)
    nodes = list(model.topo.nodes)
    edge_nodes = [n for n, r in zip(nodes, model.topo.roles) if r == "edge"]
    existing = [(s, str(rng.choice(nodes))) for s in rng.choice(list(app.services), int(rng.integers(2, 9)))]
    view = view_with(app, model, existing)
    # keep the existing pods within the edge's room (drop the ones that overflow)
    while np.any(view.used_cpu > view.cap_cpu) or np.any(view.used_memory_mib > view.cap_memory_mib):
        existing.pop()
        view = view_with(app, model, existing)
    batch_services = list(rng.choice(list(app.services), int(rng.integers(1, 9))))
    core = KubeDSMCore(KubeDSMArgs(qos=qos))
    st = Edge(view)
    batch = np.array([batch_services.count(s) for s in st.services])
    chosen, arranged = core.decide_batch(st, batch)
    total = st.total + batch
    got = core.qos(st, st.on_edge.sum(axis=0) + chosen, total)
    best = -np.inf
    free = (st.cap - st.used)
    for where in itertools.product(range(len(edge_nodes) + 1), repeat=len(batch_services)):
        load = np.zeros_like(free)
        on = np.zeros(len(st.services), int)
        for s, e in zip(batch_services, where):
            if e < len(edge_nodes):
                load[e] += st.req[st.sidx[s]]
                on[st.sidx[s]] += 1
        if np.all(load <= free + 1e-9):
            best = max(best, core.qos(st, st.on_edge.sum(axis=0) + on, total))
    assert got == pytest.approx(best)
    assert np.all(st.used + arranged @ st.req <= st.cap + 1e-9)


def test_place_fills_the_edge_then_the_cloud_and_plan_brings_pods_back(setting):
    app, model = setting
    view = ClusterView.build(app, model, [True] * len(model.topo.nodes), [])
    pol = build("kubedsm")
    pods = [view.pending(s) for _ in range(6) for s in app.services]  # 24 pods: more than the edge holds
    nodes = pol.place(view, pods)
    assert None not in nodes
    for i, (p, n) in enumerate(zip(pods, nodes)):
        view = view.with_pod(p, n, name=f"{p.service}-{i}")
    assert np.all(view.used_cpu <= view.cap_cpu + 1e-9) and np.all(view.used_memory_mib <= view.cap_memory_mib + 1e-9)
    counts = edge_counts(view)
    assert 0 < sum(e for e, _ in counts.values()) < len(pods)
    assert pol.plan(view) == []  # the edge is full: nothing to bring back
    # two edge pods of 'a' go away (scale-down): KubeDSM brings cloud pods back to the edge
    gone = [p for p in view.pods if p.service == "b" and view.node(p.node).role == "edge"][:2]
    view = ClusterView.build(app, model, [True] * len(model.topo.nodes), [p for p in view.pods if p not in gone])
    before = sum(e for e, _ in edge_counts(view).values())
    moves = pol.plan(view)
    assert moves and all(view.node(view.pod(m.pod).node).role == "cloud" for m in moves)
    for m in moves:
        assert view.valid(m)
        view = view.after(m)
    assert sum(e for e, _ in edge_counts(view).values()) > before


def test_never_moves_a_one_pod_service_nor_all_of_a_service(setting):
    app, model = setting
    # one pod of each service on the cloud, the edge empty: every service has a single running pod
    view = view_with(app, model, [(s, "n5") for s in app.services])
    assert build("kubedsm").plan(view) == []
    # two pods of 'a', both on the cloud, room on the edge: one may move, never both at once
    view = view_with(app, model, [("a", "n5"), ("a", "n5")])
    moves = build("kubedsm").plan(view)
    assert len(moves) == 1


@pytest.mark.parametrize("variant, limits", [("original", (5, 3)), ("midmig", (2, 1)), ("nocloudoffload", (0, 3)),
                                             ("noedgemig", (5, 0))])
def test_variants_set_the_migration_limits(variant, limits):
    assert KubeDSMArgs(variant=variant).limits() == limits
    assert KubeDSMArgs(variant=variant, max_migrations=2).limits()[1] == 2


def test_nocloudoffload_never_brings_cloud_pods_to_the_edge(setting):
    app, model = setting
    view = view_with(app, model, [("a", "n5"), ("a", "n5"), ("b", "n5"), ("b", "n5")])
    assert build("kubedsm", variant="nocloudoffload").plan(view) == []
    assert build("kubedsm").plan(view)


def test_the_schedule_scales_the_edge_less_the_generators_reserve(setting):
    """k_d = mean over (cores, memory) of (edge capacity less 1 core and 1 GiB per node) / 4 / d's
    request: on the authors' cluster (edge 14 cores, 16 GiB) A gets mean(11/4/1, 13312/4/950)."""
    app, _ = setting
    k = {"a": (11 / 4 + 13312 / 4 / 950) / 2, "b": (11 / 4 + 13312 / 4 / 1900) / 2, "c": (11 / 4 + 13312 / 4 / 950) / 2,
         "d": (11 / 4 / 2 + 13312 / 4 / 1900) / 2}
    for m in (1.0, 1.6):
        assert m_sigma_schedule(app, m, 0.0, 3, cycles=2) == [{s: round(m * k[s]) for s in "abcd"}] * 2
    full = m_sigma_schedule(app, 1.6, 0.0, 3, cycles=1, reserve=(0.0, 0.0))[0]
    assert full == {"a": 6, "b": 5, "c": 6, "d": 3}  # mean(14/4, 16384/4/950) x 1.6, ...


def test_system_reserved_shrinks_only_the_edge(setting, tmp_path):
    _, model = setting
    r = Ground(tmp_path, system_reserved=(1.0, 512.0)).view().model
    edge = np.array([x == "edge" for x in model.topo.roles])
    assert np.allclose(r.topo.cpus[edge], model.topo.cpus[edge] - 1) and np.allclose(r.topo.cpus[~edge], model.topo.cpus[~edge])
    assert np.allclose(r.topo.memory_mib[edge], model.topo.memory_mib[edge] - 512)


def test_a_schedule_plays_the_same_every_time_and_the_same_for_every_policy(setting, ground):
    app, _ = setting
    a = m_sigma_schedule(app, 1.3, 0.4, 7)
    assert a == m_sigma_schedule(app, 1.3, 0.4, 7) and a != m_sigma_schedule(app, 1.3, 0.4, 8)
    assert len(a) == 12 and all(min(c.values()) >= 1 for c in a)
    short = a[:4]
    r1 = ground.play("det-1", short, {"kubedsm": build("kubedsm"), "cf": build("cf"), "k8s-edge": build("k8s-edge")})
    r2 = ground.play("det-2", short, {"kubedsm": build("kubedsm")})
    assert r1["kubedsm"]["metrics"]["edge_ratio"] == r2["kubedsm"]["metrics"]["edge_ratio"]
    assert r1["kubedsm"]["metrics"]["migrations"] == r2["kubedsm"]["metrics"]["migrations"]
    assert r1["cf"]["metrics"]["edge_ratio"] == 0.0  # an unlimited cloud takes every pod
    assert 0.3 < r1["k8s-edge"]["metrics"]["edge_ratio"] <= 1.0
    for r in r1.values():  # every policy met every cycle's counts
        cycles = [e for e in _events(r) if e["kind"] == "replica-cycle"]
        assert [e["detail"]["replicas"] for e in cycles] == short


def _events(summary: dict) -> list[dict]:
    """The run's events.csv as dicts (t, kind, detail)."""
    import csv
    import json

    with open(Path(summary["run_dir"]) / "events.csv") as f:
        return [{"t": float(r["t"]), "kind": r["kind"], "detail": json.loads(r["detail"] or "{}")} for r in csv.DictReader(f)]


def test_a_pod_scaled_down_holds_its_room_while_it_terminates(tmp_path):
    """Cycle 1 scales a from 14 pods to 1 and c from 1 to 5 at once: the edge (14 cores) is full,
    and a's pods leave only after c's new ones are placed (as Kubernetes schedules new pods while
    the old terminate), so c's new pods go to the cloud, where the default scheduler leaves them,
    however short the hold. c's pods of cycle 2 (10 s later) find the room free again, unless the
    hold outlasts the run."""
    sched = [{"a": 14, "b": 1, "c": 1, "d": 1}, {"a": 1, "b": 1, "c": 5, "d": 1}, {"a": 1, "b": 1, "c": 9, "d": 1}]
    share = {g: Ground(tmp_path / str(g), terminating_s=g, cycle_s=10).play("hold", sched, {"k8s-edge": build("k8s-edge")})
             ["k8s-edge"]["metrics"]["edge_ratio_by_service"]["c"] for g in (0.0, 2.0, 60.0)}
    assert share[0.0] == share[2.0] > share[60.0]
    assert share[2.0] < 1.0


def test_through_the_hpa_a_schedule_reaches_the_cluster_at_its_pace(setting, tmp_path):
    """From 1 pod of a, a cycle asking 12: the HPA adds at most max(4, 100 %) a sync (1 -> 5 -> 10
    -> 12); asked down to 2, it waits out the 300 s stabilisation window."""
    sched = [{"a": 1, "b": 1, "c": 1, "d": 1}, {"a": 12, "b": 1, "c": 1, "d": 1}] + [{"a": 2, "b": 1, "c": 1, "d": 1}] * 4
    run = Ground(tmp_path, through_hpa=True, cycle_s=100).play("pace", sched, {"k8s-edge": build("k8s-edge")})["k8s-edge"]
    ups = [(round(e["t"] - _t0(run)), e["detail"]["to"]) for e in _events(run) if e["kind"] == "scale"
           and e["detail"]["service"] == "a"]
    assert ups[:3] == [(105, 5), (120, 10), (135, 12)]
    assert ups[3][1] == 2 and ups[3][0] >= 100 + 300  # the highest count of the last 300 s was 12


def test_the_committed_workload_files_are_the_generators_seed_0(setting):
    """scenarios/kubedsm/*.yaml (python -m studies.kubedsm.paper scenarios) load as scenarios, and
    each plays the generator's seed-0 schedule of its workload: regenerate them if the generator moves."""
    from harness.scenarios.catalog import load_scenario
    from studies.kubedsm.workloads import WORKLOADS, workload_name

    app, _ = setting
    for m, sigma in WORKLOADS:
        sc, _ = load_scenario(str(REPO / "scenarios/kubedsm" / f"{workload_name(m, sigma)}.yaml"))
        cycles = [{s: n for s, n in c.items()} for c in sc.replica_schedule.cycles]
        assert cycles == m_sigma_schedule(app, m, sigma, 0)
        assert sc.duration_s == len(cycles) * sc.replica_schedule.cycle_s and sc.app == "kubedsm"


def _t0(summary: dict) -> float:
    return next(e["t"] for e in _events(summary) if e["kind"] == "load-start")


def test_a_plan_through_full_edge_nodes_makes_room_through_the_cloud(setting):
    """A live 1.3_0.4 run: KubeDSM's arrangement swaps b (n2 -> n4) and c (n4 -> n2) and brings a
    to n2, with n2 short of memory and n4 of cores. The first waiting pod (a, on the cloud) had
    nowhere to step aside, so no move was ever valid and the plan was refused for 40 s; b can
    step aside to the cloud."""
    app, model = setting
    now = {"a": ["n3", "n2", "n5"], "b": ["n2", "n4", "n2"], "c": ["n3", "n4", "n4", "n5", "n5"], "d": ["n3", "n4", "n5"]}
    view = view_with(app, model, [(s, n) for s, nodes in now.items() for n in nodes])
    moves = build("kubedsm").plan(view)
    assert moves, "the arrangement puts one more pod on the edge"
    for m in moves:
        assert view.valid(m), m
        view = view.after(m)
    shares = {s: sum(view.node(p.node).role == "edge" for p in view.pods_of(s)) for s in now}
    assert shares == {"a": 3, "b": 3, "c": 3, "d": 2}
