"""HephaestusForge's admission placers on the one ground (``harness.families.hephaestus.admission``): a request
goes whole to the site the world's rule picks and inside it to nodes by the default scheduler, or
is spread, or is rejected whole; the cluster view becomes the same sites world a model was trained
in with ``--inventory``."""

from __future__ import annotations

import numpy as np
import pytest

from harness.errors import UserError
from harness.policies import build
from harness.families.hephaestus.admission import site_state
from harness.policies.contract import ClusterView, PendingPod
from harness.sim.ceenv import default_model
from harness.families.hephaestus.world import MultiClusterConfig, MultiClusterEnv, sites_of
from harness.sim.topology import model_for
from harness.spec.app import load_app
from harness.spec.inventory import load_inventory
from harness.spec.profile import load_profile
from harness.testbed.simulated import simulated_state
from tests.conftest import REPO

INVENTORY = REPO / "inventories/hephaestus-local.yaml"
SITE = {"edge-1": "edge-1", "edge-2": "edge-2", "fog-a": "fog", "fog-b": "fog", "cloud": "cloud"}


@pytest.fixture(scope="module")
def empty() -> ClusterView:
    app = load_app(REPO / "workloads/c2e.json")
    model = model_for(app, load_profile(REPO / "profiles/c2e.hephaestus-local.json"),
                      simulated_state(load_inventory(INVENTORY)))
    return ClusterView.build(app, model, [True] * len(model.topo.nodes), [])


def request(n: int, cpu: float = 0.2, memory_mib: float = 512.0, service: str = "ditto-things") -> list[PendingPod]:
    return [PendingPod(service, cpu, memory_mib, f"r#{i}") for i in range(n)]


def test_the_view_is_the_sites_world_the_model_was_trained_in(empty):
    from_view, cpu, mem, _ = site_state(empty)
    trained = sites_of(str(INVENTORY))
    assert from_view.names == trained.names == ("cloud", "edge-1", "edge-2", "fog")
    for field in ("cap_cpu", "cap_mem", "cost", "lat"):
        assert np.allclose(getattr(from_view, field), getattr(trained, field)), field
    assert list(trained.cap_cpu) == [8, 2, 2, 4] and list(trained.cost) == [16, 1, 2, 4]
    assert trained.lat[0, 3] == 80 and trained.lat[1, 2] == 20  # cloud-fog, edge-1-edge-2
    assert not cpu.any() and not mem.any()


def test_each_baseline_puts_the_whole_request_on_the_site_its_rule_picks(empty):
    view = empty
    for pod in request(2, cpu=0.5, memory_mib=256):  # fog is the most allocated share, edge-2 the least
        view = view.with_pod(pod, "fog-a")
    view = view.with_pod(request(1, cpu=0.5, memory_mib=256)[0], "cloud")
    view = view.with_pod(request(1, cpu=0.25, memory_mib=256)[0], "edge-1")
    three = request(3)
    where = {name: {SITE[n] for n in build(name).place(view, three)} for name in
             ("binpack-greedy", "cpu-greedy", "karmada-greedy")}
    assert where == {"binpack-greedy": {"fog"}, "cpu-greedy": {"edge-2"}, "karmada-greedy": {"cloud"}}
    nodes = build("binpack-greedy").place(view, three)
    assert nodes[0] == "fog-b"  # inside the site its default scheduler: the least allocated node first
    # hf-latency-greedy: a random site meeting the threshold (every site's mean RTT does here), seeded
    picks = [build("hf-latency-greedy", seed=s).place(view, three) for s in range(8)]
    assert all(len({SITE[n] for n in p}) == 1 for p in picks) and len({SITE[p[0]] for p in picks}) > 1
    assert picks[0] == build("hf-latency-greedy", seed=0).place(view, three)


def test_a_request_no_site_can_hold_is_rejected_whole_or_spread(empty):
    big = request(6, cpu=1.5)  # 9 cores: more than any site (the cloud holds 0.95 x 8)
    for name in ("binpack-greedy", "cpu-greedy", "karmada-greedy", "hf-latency-greedy"):
        assert build(name).place(empty, big) == [None] * 6, name
    spread = build("spread-ffd").place(empty, big)  # FFD over the sites: cloud 2, fog 2, each edge 1
    assert sorted(SITE[n] for n in spread) == ["cloud", "cloud", "edge-1", "edge-2", "fog", "fog"]
    # the sites have room for a spread of 3-core pods (cloud 2, fog 1), but no fog node has 3 cores
    assert build("spread-ffd").place(empty, request(3, cpu=3.0)) == [None] * 3


def test_a_site_whose_room_is_in_pieces_is_not_open_to_a_pod_no_node_of_it_holds(empty):
    """Fog's two nodes keep 0.8 cores each: 1.6 summed, but a 1-core pod fits neither. The world
    counts a site's room node by node (as Karmada's replica estimator), so binpack-greedy, which
    picks the most allocated site, goes elsewhere instead of choosing fog and rejecting."""
    view = empty
    for node in ("fog-a", "fog-b"):
        view = view.with_pod(request(1, cpu=1.2, memory_mib=256)[0], node)
    env, _ = build("binpack-greedy").world(view, request(1, cpu=1.0))
    fog = env.sites.names.index("fog")
    assert not env.action_masks()[fog] and env.action_masks()[:len(env.sites.names)].any()
    nodes = build("binpack-greedy").place(view, request(1, cpu=1.0))
    assert nodes[0] is not None and SITE[nodes[0]] != "fog"
    # a 0.5-core pod: each fog node holds one, so fog is open to two of them and not to three
    two, three = (build("binpack-greedy").world(view, request(k, cpu=0.5))[0] for k in (2, 3))
    assert two.action_masks()[fog] and not three.action_masks()[fog]


def test_a_sites_room_counts_only_the_nodes_a_service_may_use(empty):
    """With node affinity to fog-a alone and one pod per node, fog holds one pod of ditto-things
    however much room fog-b has: two are not a fit there."""
    app = empty.app.model_copy(deep=True)
    spec = app.services["ditto-things"]
    spec.node_affinity, spec.pod_antiaffinity = ["fog-a"], True
    view = ClusterView.build(app, empty.model, list(empty.up), [])
    fog = site_state(view)[0].names.index("fog")
    one, two = (build("binpack-greedy").world(view, request(k, cpu=0.2))[0] for k in (1, 2))
    assert one.action_masks()[fog] and not two.action_masks()[fog]


def test_a_batch_of_services_is_one_request_per_service(empty):
    pods = request(2, service="adapter-http") + request(2, service="ditto-gateway")
    nodes = build("binpack-greedy").place(empty, pods)
    assert None not in nodes
    assert len({SITE[n] for n in nodes[:2]}) == 1 and len({SITE[n] for n in nodes[2:]}) == 1


def test_the_ds_model_acts_on_the_view_as_in_its_simulated_world(empty):
    from harness.families.hephaestus.ds_ppo import act, load_actor

    policy = build("ds-ppo")
    assert policy.model_file.endswith("models/ds-ppo-hephaestus-local.pt")
    assert policy.args.t_r == pytest.approx(0.1)  # the model's world: 10 requests per time unit
    net, meta = load_actor(policy.model_file)
    assert meta["world_config"]["inventory"].endswith("hephaestus-local.yaml")
    env = MultiClusterEnv(MultiClusterConfig(inventory=str(INVENTORY), background=(0.0, 0.0)), seed=3)
    rng = np.random.default_rng(0)
    for _ in range(20):  # random states of the sites world and requests: the view gives the same action
        view = empty
        for node in rng.choice(list(SITE), size=int(rng.integers(0, 12))):
            view = view.with_pod(request(1, cpu=0.2, memory_mib=300)[0], str(node))
        pods = request(int(rng.integers(1, 8)), memory_mib=float(rng.choice([205, 307, 512])),
                       service=str(rng.choice(["adapter-http", "ditto-things"])))
        sim, masks = policy.world(view, pods)
        env.alloc_cpu, env.alloc_mem, env.request = sim.alloc_cpu, sim.alloc_mem, sim.request
        nodes = policy.place(view, pods)
        split = env.split_of(act(net, env))
        if split is None:
            assert nodes == [None] * len(pods)
        else:
            got = np.zeros(4)
            for n in nodes:
                got[sites_of(str(INVENTORY)).names.index(SITE[n])] += 1
            assert np.array_equal(got, split)


def test_a_cluster_without_sites_is_refused_with_one_line():
    model = default_model(None, None)  # REACH's testbed: tiers, no sites
    view = ClusterView.build(model.app, model, [True] * len(model.topo.nodes), [])
    with pytest.raises(UserError, match="no node of this cluster belongs to a site"):
        build("binpack-greedy").check(view)
