"""The generated continuum: seeded, an ordinary inventory, its tiers, sites and RTTs as stated."""

from __future__ import annotations

import pytest

from harness.generators.continuum import TYPES, Shape, continuum
from harness.generators.files import save
from harness.spec.inventory import load_inventory


def test_the_same_seed_gives_the_same_continuum_and_another_seed_another():
    assert continuum(300, 4) == continuum(300, 4)
    assert continuum(300, 4) != continuum(300, 5)


@pytest.mark.parametrize("nodes", [3, 10, 250, 1000])
def test_a_continuum_is_an_inventory_with_its_tiers_and_sites(tmp_path, nodes):
    inv = load_inventory(save(continuum(nodes, 1, clients=2), tmp_path / "inv.yaml"))
    tiers = [inv.node_type(n).tier for n in inv.nodes]
    assert tiers.count("client") == 2 and len(inv.nodes) == nodes + 2
    count = {t: tiers.count(t) for t in ("cloud", "fog", "edge")}
    assert min(count.values()) >= 1 and sum(count.values()) == nodes
    if nodes >= 100:  # the stated shares
        assert count == {"cloud": nodes // 10, "fog": nodes * 3 // 10, "edge": nodes - nodes // 10 - nodes * 3 // 10}
    for n in inv.nodes:
        tier = inv.node_type(n).tier
        assert n.type in [t[0] for t in TYPES[tier]]
        assert (n.site is None) == (tier == "client") and (n.site is None or n.site.startswith(tier))
    assert inv.role("fog") == "edge"
    sites = {n.site for n in inv.nodes if n.site}
    assert len(inv.links) <= 3 * len(sites)  # per site, not per pair of nodes


def test_rtts_follow_the_sites():
    shape = Shape()
    inv = load_inventory(save(continuum(400, 2), __import__("pathlib").Path(__import__("tempfile").mkdtemp()) / "i.yaml"))
    by_site: dict[str, list] = {}
    for n in inv.nodes:
        by_site.setdefault(n.site, []).append(n)
    edge_site = next(s for s, ns in by_site.items() if s and s.startswith("edge") and len(ns) > 1)
    a, b = by_site[edge_site][:2]
    assert inv.pair_rtt(a, b) == shape.within_site_ms["edge"]
    fog_site = next(link.sites[1] for link in inv.links if link.sites and link.sites[0] == edge_site
                    and link.sites[1] != edge_site)
    own = inv.pair_rtt(a, by_site[fog_site][0])
    assert shape.edge_to_fog_ms[0] <= own <= shape.edge_to_fog_ms[1]
    other = next(s for s in by_site if s and s.startswith("fog") and s != fog_site)
    assert inv.pair_rtt(a, by_site[other][0]) == shape.tier_ms["edge-fog"] > own
    user = next(n for n in inv.nodes if n.site is None)
    assert inv.pair_rtt(user, a) == shape.tier_ms["client-edge"]


def test_too_small_a_continuum_is_refused():
    with pytest.raises(ValueError, match="at least 3"):
        continuum(2)
