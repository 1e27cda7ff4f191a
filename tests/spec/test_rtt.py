"""RTTs held per group of nodes (harness.spec.rtt): the same RTT for every pair as the inventory
gives pair by pair, in the size of the groups, and the same after pairs are changed."""

from __future__ import annotations

import json

import numpy as np
import pytest

from harness.generators.continuum import continuum
from harness.spec.inventory import Inventory, check_semantics, load_inventory
from harness.spec.loader import parse_model
from harness.spec.rtt import GroupedRTT
from harness.spec import testbed_state
from harness.testbed.simulated import SimCluster, simulated_state
from tests.conftest import REPO


def pairwise(inv: Inventory) -> dict[str, dict[str, float]]:
    """Every pair's RTT as the inventory defines it, one pair at a time (the reference)."""
    return {a.name: {b.name: 0.0 if a.name == b.name else inv.pair_rtt(a, b) for b in inv.nodes} for a in inv.nodes}


def with_links(n: int, seed: int) -> Inventory:
    """A generated continuum with node links on top of its site links (a node's own group)."""
    doc = continuum(n, seed)
    names = [x["name"] for x in doc["nodes"]]
    doc["links"] += [{"nodes": [names[1], names[-2]], "rtt_ms": 7.5}, {"nodes": [names[2], names[3]], "rtt_ms": 0.25}]
    return check_semantics(parse_model(Inventory, doc, "generated"), "generated")


@pytest.mark.parametrize("path", [None, *sorted((REPO / "inventories").glob("*.yaml"))], ids=str)
def test_every_shipped_inventory_gives_every_pair_its_rtt(path):
    inv = load_inventory(path)
    assert inv.rtt_groups().matrix() == pairwise(inv)


@pytest.mark.parametrize("seed", range(3))
def test_a_generated_continuum_with_node_links_gives_every_pair_its_rtt_in_few_groups(seed):
    inv = with_links(150, seed)
    groups = inv.rtt_groups()
    assert groups.matrix() == pairwise(inv)
    sites = {n.site for n in inv.nodes}
    assert groups.groups <= len(sites) + 4  # a group per (tier, site) and the two linked pairs' nodes
    again = GroupedRTT.from_json(json.loads(json.dumps(groups.to_json())))
    assert again.matrix() == groups.matrix()


def test_a_thousand_node_simulated_testbed_holds_no_pair_by_pair_matrix():
    inv = check_semantics(parse_model(Inventory, continuum(1000, 0), "generated"), "generated")
    state = simulated_state(inv)
    assert state.rtt_configured_ms == {}
    groups = state.configured_rtt()
    assert groups.groups < 60 and len(groups.nodes) == 1001
    a, b = inv.nodes[0], inv.nodes[-2]
    assert groups.get(a.name, b.name) == inv.pair_rtt(a, b)


@pytest.mark.parametrize("seed", range(20))
def test_changed_pairs_leave_every_other_pair_as_it_was(seed):
    inv = with_links(40, seed)
    groups = inv.rtt_groups()
    rng = np.random.default_rng(seed)
    names = list(groups.nodes)
    changes = {(names[int(rng.integers(len(names)))], names[int(rng.integers(len(names)))]): float(rng.uniform(0, 9))
               for _ in range(int(rng.integers(1, 25)))}
    want = groups.matrix()
    for (a, b), ms in changes.items():
        want[a][b] = want[b][a] = ms
    assert groups.with_pairs(changes).matrix() == want


def test_a_simulated_cluster_sets_latency_pair_by_pair_as_a_dense_matrix_would():
    inv = load_inventory(None)
    cluster = SimCluster(simulated_state(inv))
    want = pairwise(inv)
    cloud = [n.name for n in cluster.nodes if n.tier == "cloud"]
    edge = [n.name for n in cluster.nodes if n.tier == "edge"]
    for a in cloud:
        for b in edge:
            cluster.set_latency(a, b, 123.0)
            want[a][b] = want[b][a] = 123.0
    assert cluster.rtt_configured() == want
    assert cluster.rtt_groups().matrix() == want


def test_a_state_without_groups_reads_its_pairs():
    inv = load_inventory(None)
    state = simulated_state(inv)
    dense = testbed_state.TestbedState(**{**state.model_dump(), "rtt_groups": None, "rtt_configured_ms": pairwise(inv)})
    assert dense.configured_rtt().matrix() == pairwise(inv)
    assert dense.configured_rtt().groups == len(inv.nodes)  # each node a group of its own
