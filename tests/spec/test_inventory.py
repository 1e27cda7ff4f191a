from pathlib import Path

import pytest
import yaml

from harness.errors import UserError
from harness.spec.inventory import load_inventory


def test_default_inventory_is_reach_testbed():
    inv = load_inventory()
    counts = {}
    for n in inv.nodes:
        counts[n.type] = counts.get(n.type, 0) + 1
    assert counts == {"cloud-a": 2, "edge-a": 2, "edge-b": 2, "client-a": 1}
    t = inv.node_types
    assert (t["cloud-a"].cpus, t["cloud-a"].memory_gb) == (8, 16)
    assert (t["edge-a"].cpus, t["edge-a"].memory_gb) == (4, 8)
    assert (t["edge-b"].cpus, t["edge-b"].memory_gb) == (2, 4)
    assert (t["client-a"].cpus, t["client-a"].memory_gb) == (4, 8)
    assert t["cloud-a"].speed / t["edge-a"].speed == pytest.approx(1.5, rel=1e-3)
    assert t["cloud-a"].speed / t["edge-b"].speed == pytest.approx(2.0)
    m = inv.rtt_matrix()
    assert m["cloud-a-1"]["edge-b-2"] == m["edge-b-2"]["cloud-a-1"] == 50
    assert m["cloud-a-1"]["client-a-1"] == 50
    assert m["edge-a-1"]["client-a-1"] < 1 and m["cloud-a-1"]["cloud-a-2"] < 1 and m["edge-a-1"]["edge-b-1"] < 1
    assert all(m[a][a] == 0 for a in m)


def _write(tmp_path: Path, mutate) -> Path:
    doc = yaml.safe_load(Path(__file__).resolve().parents[2].joinpath(
        "harness/data/inventories/reach-local.yaml").read_text())
    mutate(doc)
    p = tmp_path / "inv.yaml"
    p.write_text(yaml.safe_dump(doc))
    return p


@pytest.mark.parametrize("mutate, field, words", [
    (lambda d: d["nodes"].append({"name": "edge-c-1", "type": "edge-c"}), "nodes[7].type", "unknown node type 'edge-c'"),
    (lambda d: d["node_types"]["edge-a"].update(cpus=0), "node_types.edge-a.cpus", "must be > 0"),
    (lambda d: d["node_types"]["edge-b"].update(memory_gb=-4), "node_types.edge-b.memory_gb", "must be > 0"),
    (lambda d: d["node_types"]["cloud-a"].update(speed=0), "node_types.cloud-a.speed", "must be > 0"),
    (lambda d: d["rtt_ms"].pop("cloud-edge"), "rtt_ms", "no latency between tiers 'cloud' and 'edge'"),
    (lambda d: d["nodes"].append({"name": "cloud-a-1", "type": "cloud-a"}), "nodes[7].name", "duplicate node name"),
    (lambda d: d["nodes"][0].update(name="Cloud_1"), "nodes[0].name", "DNS-1123"),
    (lambda d: d["rtt_ms"].update({"cloud-moon": 3}), "rtt_ms.cloud-moon", "two tiers"),
    (lambda d: d["node_types"]["edge-a"].update(tier="fog"), "node_types.edge-a.tier", "tier 'fog' has no role"),
    (lambda d: d.update(tiers={"fog": {"role": "gateway"}}), "tiers.fog.role", "'cloud', 'edge' or 'client'"),
    (lambda d: d["node_types"]["edge-a"].update(cost=-1), "node_types.edge-a.cost", "≥ 0"),
    (lambda d: d.update(links=[{"nodes": ["edge-a-1", "edge-a-2"], "bandwidth_mbit": 0}]), "links[0].bandwidth_mbit",
     "> 0"),
    (lambda d: d.update(links=[{"sites": ["dc1", "dc9"], "rtt_ms": 5}]), "links[0].sites", "unknown site 'dc1'"),
    (lambda d: d.update(links=[{"nodes": ["edge-a-1", "edge-z"], "rtt_ms": 5}]), "links[0].nodes", "unknown node 'edge-z'"),
    (lambda d: d.update(links=[{"nodes": ["edge-a-1", "edge-a-2"], "sites": ["a", "b"], "rtt_ms": 5}]), "links[0]",
     "exactly one of tiers, sites or nodes"),
    (lambda d: d["local"].update(prefix="way-too-long"), "local.prefix", "1-6"),
    (lambda d: d.update(colour="red"), "colour", "unknown field"),
])
def test_bad_inventory_names_file_and_field(tmp_path, mutate, field, words):
    path = _write(tmp_path, mutate)
    with pytest.raises(UserError) as err:
        load_inventory(path)
    line = str(err.value)
    assert line.startswith(f"{path}: {field}: "), line
    assert words in line
    assert "\n" not in line


def test_unreadable_and_malformed_files(tmp_path):
    with pytest.raises(UserError, match=r"nope\.yaml: file not found"):
        load_inventory(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("nodes: [\n")
    with pytest.raises(UserError, match=r"bad\.yaml: invalid YAML at line \d+"):
        load_inventory(bad)
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    with pytest.raises(UserError, match="file is empty"):
        load_inventory(empty)


def test_tier_pair_keys_are_order_insensitive(tmp_path):
    def swap(d):
        d["rtt_ms"]["edge-cloud"] = d["rtt_ms"].pop("cloud-edge")
    inv = load_inventory(_write(tmp_path, swap))
    assert inv.rtt_matrix()["edge-a-1"]["cloud-a-2"] == 50


INV = """
name: sites
tiers: {near-edge: {role: edge}, far-edge: {role: edge}}
node_types:
  ne: {tier: near-edge, cpus: 2, memory_gb: 2, speed: 0.5, cost: 9, gpus: 1}
  fe: {tier: far-edge, cpus: 40, memory_gb: 50, speed: 0.75, cost: 5}
  c: {tier: client, cpus: 2, memory_gb: 2, speed: 0.5}
nodes:
  - {name: ne-1, type: ne, site: dc1}
  - {name: ne-2, type: ne, site: dc1}
  - {name: ne-3, type: ne, site: dc2}
  - {name: fe-1, type: fe, site: dc2}
  - {name: cl-1, type: c}
rtt_ms: {near-edge-near-edge: 1, near-edge-far-edge: 5, client-near-edge: 1, client-far-edge: 5}
links:
  - {sites: [dc1, dc2], rtt_ms: 30}
  - {nodes: [ne-1, ne-3], rtt_ms: 2, bandwidth_mbit: 100}
  - {tiers: [near-edge, far-edge], bandwidth_mbit: 1000}
"""


def test_roles_sites_and_the_most_specific_rtt_wins(tmp_path):
    p = tmp_path / "inv.yaml"
    p.write_text(INV)
    inv = load_inventory(p)
    m = inv.rtt_matrix()
    assert m["ne-1"]["ne-2"] == 1  # same site: the tier pair
    assert m["ne-2"]["ne-3"] == m["ne-3"]["ne-2"] == 30  # across sites: the site pair beats the tier pair
    assert m["ne-1"]["ne-3"] == 2  # the node pair beats the site pair
    assert m["ne-1"]["fe-1"] == 30 and m["ne-3"]["fe-1"] == 5  # dc1 -> dc2 by site; inside dc2 by tiers
    bw = inv.bandwidth_matrix()
    assert bw["ne-1"]["ne-3"] == 100 and bw["ne-1"]["fe-1"] == bw["fe-1"]["ne-2"] == 1000 and "ne-2" not in bw["ne-1"]
    assert inv.role("near-edge") == inv.role("far-edge") == "edge" and inv.role("cloud") == "cloud"
    assert inv.node_types["ne"].cost == 9 and inv.node_types["ne"].gpus == 1


def test_the_sample_inventories_are_the_papers_clusters():
    repo = Path(__file__).resolve().parents[2]
    ro = load_inventory(repo / "inventories/rollout-basic-local.yaml")
    tiers = [ro.node_type(n).tier for n in ro.nodes]
    assert (tiers.count("near-edge"), tiers.count("far-edge"), tiers.count("cloud"), tiers.count("client")) == (20, 5, 2, 1)
    for n in ro.nodes:
        t = ro.node_type(n)
        lo, hi = {"near-edge": (1, 8), "far-edge": (40, 80), "cloud": (400, 600), "client": (0, 99)}[t.tier]
        assert lo <= t.cpus <= hi
    costs = {ro.node_type(n).tier: ro.node_type(n).cost for n in ro.nodes if ro.node_type(n).tier != "client"}
    assert costs["near-edge"] > costs["far-edge"] > costs["cloud"] and all(1 <= c <= 10 for c in costs.values())
    kd = load_inventory(repo / "inventories/kubedsm-local.yaml")
    got = {n.name: (kd.node_type(n).tier, kd.node_type(n).cpus, kd.node_type(n).memory_gb) for n in kd.nodes}
    assert got == {"n1": ("client", 4, 6), "n2": ("edge", 5, 5), "n3": ("edge", 4, 4), "n4": ("edge", 5, 7),
                   "n5": ("cloud", 17, 22)}  # N4, N5 as the authors' configs (Table 4 transposes them)
