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
    (lambda d: d["node_types"]["edge-a"].update(tier="fog"), "node_types.edge-a.tier", "'cloud', 'edge' or 'client'"),
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
