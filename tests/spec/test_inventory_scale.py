"""A simulated continuum of any size: an inventory of a thousand nodes validates (by tier pair,
not pair by pair), and only the local testbed, which builds them, holds at most 250."""

from pathlib import Path

import pytest
import yaml

from harness.errors import UserError
from harness.spec.inventory import load_inventory

BASE = Path("harness/data/inventories/reach-local.yaml")


def big(tmp_path, n: int, drop_rtt: str | None = None) -> Path:
    doc = yaml.safe_load(BASE.read_text())
    tier = {t: v["tier"] for t, v in doc["node_types"].items()}
    clients = [x for x in doc["nodes"] if tier[x["type"]] == "client"]
    others = [x for x in doc["nodes"] if tier[x["type"]] != "client"]
    nodes, k = list(clients), 0
    while len(nodes) < n:
        nodes += [{**x, "name": f"{x['name']}-{k}"} for x in others]
        k += 1
    doc["nodes"] = nodes[:n]
    if drop_rtt:
        doc["rtt_ms"].pop(drop_rtt)
    path = tmp_path / f"inv{n}.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_a_thousand_nodes_validate_and_a_missing_tier_pair_is_still_named(tmp_path):
    inv = load_inventory(big(tmp_path, 1001))
    assert len(inv.nodes) == 1001
    key = next(iter(yaml.safe_load(BASE.read_text())["rtt_ms"]))
    with pytest.raises(UserError, match="no latency between tiers"):
        load_inventory(big(tmp_path, 300, drop_rtt=key))


def test_only_the_local_testbed_caps_the_nodes(tmp_path):
    from harness.testbed.local.provision import MAX_NODES, provision

    inv = load_inventory(big(tmp_path, MAX_NODES + 1))
    with pytest.raises(UserError, match=f"at most {MAX_NODES}"):
        provision(inv, tmp_path / "state")
    assert not (tmp_path / "state").exists()  # refused before anything is written
