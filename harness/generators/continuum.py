"""A cloud-edge continuum of any size as an inventory: tiers, sites, node types with their costs,
and RTTs held per tier and site pair (so a thousand nodes cost a table of their groups, not a
million pairs: ``harness.spec.rtt``).

The shape, every number of which is a parameter (``Shape``):

- three tiers of placement nodes, ``cloud`` (role cloud), ``fog`` and ``edge`` (role edge), 10 %,
  30 % and 60 % of the nodes, and ``clients`` client nodes where the users are;
- sites in a hierarchy: about √N edge sites, a quarter as many fog sites, a fifth as many cloud
  regions (at least one each); each edge site hangs off a fog site, each fog site off a cloud
  region, and a tier's nodes are spread over its sites at random;
- RTTs: within a site (``links`` with one site twice), from an edge site to its own fog site and
  from a fog site to its own region (site-pair links, drawn uniformly from their ranges), and the
  tier pairs' ``rtt_ms`` for every other pair (two edge sites apart, an edge site and another
  region, ...). The ranges are this generator's assumptions, of the order measured for metro edge
  (a few ms), regional fog (tens) and cloud regions (50-100 ms); the user's RTTs are per tier;
- node types per tier (``TYPES``) with what the scheduler sees, a relative speed and a price per
  hour in the proportions of on-demand cloud prices (a larger node, a higher price; an edge
  node's core no cheaper than a cloud one's).

Seeded: the same arguments give the same document. ``continuum`` returns the inventory as a
mapping ready for ``yaml.safe_dump``; ``harness generate inventory`` writes it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

# tier -> [(type, cpus, memory_gb, speed, cost per hour, share of the tier's nodes)]
TYPES: dict[str, list[tuple[str, float, float, float, float, float]]] = {
    "cloud": [("cloud-large", 32, 128, 1.0, 1.60, 0.4), ("cloud-medium", 16, 64, 1.0, 0.80, 0.6)],
    "fog": [("fog-medium", 8, 32, 0.8, 0.45, 1.0)],
    "edge": [("edge-small", 4, 8, 0.6, 0.25, 0.6), ("edge-tiny", 2, 4, 0.5, 0.15, 0.4)],
    "client": [("user", 4, 8, 1.0, 0.0, 1.0)],
}


@dataclass(frozen=True)
class Shape:
    """What ``continuum`` draws from (ms are round trips)."""

    shares: tuple[float, float, float] = (0.1, 0.3, 0.6)  # cloud, fog, edge shares of the placement nodes
    edge_sites: int | None = None  # default: round(√(edge nodes))
    fog_per_edge_site: float = 0.25  # fog sites per edge site
    regions_per_fog_site: float = 0.2  # cloud regions per fog site
    within_site_ms: dict[str, float] = field(default_factory=lambda: {"cloud": 0.5, "fog": 1.0, "edge": 1.0})
    edge_to_fog_ms: tuple[float, float] = (3.0, 10.0)  # an edge site to its own fog site
    fog_to_cloud_ms: tuple[float, float] = (10.0, 30.0)  # a fog site to its own region
    tier_ms: dict[str, float] = field(default_factory=lambda: {
        "cloud-cloud": 60.0, "cloud-fog": 40.0, "cloud-edge": 50.0, "fog-fog": 20.0, "edge-fog": 25.0,
        "edge-edge": 30.0, "client-edge": 5.0, "client-fog": 15.0, "client-cloud": 50.0, "client-client": 1.0})


def continuum(nodes: int, seed: int = 0, name: str = "continuum", clients: int = 1, shape: Shape = Shape()) -> dict:
    """An inventory of ``nodes`` placement nodes (and ``clients`` client nodes) over the three
    tiers and their sites. It names the local backend, which holds 250 nodes at most: a larger
    continuum is for ``harness evaluate`` (simulated testbeds have no cap)."""
    if nodes < 3:
        raise ValueError("a continuum needs at least 3 placement nodes (one per tier)")
    if clients < 1:
        raise ValueError("a continuum needs at least one client node")
    rng = np.random.default_rng(seed)
    counts = _split(nodes, shape.shares)
    n_edge_sites = max(1, min(counts["edge"], shape.edge_sites or round(math.sqrt(counts["edge"]))))
    n_fog_sites = max(1, min(counts["fog"], round(n_edge_sites * shape.fog_per_edge_site)))
    n_regions = max(1, min(counts["cloud"], round(n_fog_sites * shape.regions_per_fog_site)))
    sites = {"edge": [f"edge-s{i}" for i in range(n_edge_sites)], "fog": [f"fog-s{i}" for i in range(n_fog_sites)],
             "cloud": [f"cloud-r{i}" for i in range(n_regions)]}
    # every site gets a node first (no empty site), the rest at random
    out_nodes: list[dict] = []
    for tier in ("cloud", "fog", "edge"):
        names, shares = zip(*[(t[0], t[5]) for t in TYPES[tier]])
        where = list(range(len(sites[tier]))) + list(rng.integers(0, len(sites[tier]), counts[tier] - len(sites[tier])))
        kinds = rng.choice(len(names), size=counts[tier], p=np.array(shares) / sum(shares))
        for k, (s, t) in enumerate(sorted(zip(where, kinds))):
            out_nodes.append({"name": f"{tier}-{k}", "type": names[t], "site": sites[tier][s]})
    out_nodes += [{"name": f"user-{k}", "type": "user"} for k in range(clients)]
    fog_of_edge = [int(f) for f in rng.integers(0, n_fog_sites, n_edge_sites)]
    region_of_fog = [int(r) for r in rng.integers(0, n_regions, n_fog_sites)]
    links = [{"sites": [s, s], "rtt_ms": shape.within_site_ms[tier]} for tier in ("cloud", "fog", "edge")
             for s in sites[tier]]
    links += [{"sites": [sites["edge"][e], sites["fog"][f]], "rtt_ms": _ms(rng, shape.edge_to_fog_ms)}
              for e, f in enumerate(fog_of_edge)]
    links += [{"sites": [sites["fog"][f], sites["cloud"][r]], "rtt_ms": _ms(rng, shape.fog_to_cloud_ms)}
              for f, r in enumerate(region_of_fog)]
    types = {t[0]: {"tier": tier, "cpus": t[1], "memory_gb": t[2], "speed": t[3], "cost": t[4]}
             for tier, ts in TYPES.items() for t in ts}
    return {"name": name, "tiers": {"fog": {"role": "edge"}}, "node_types": types,
            "nodes": out_nodes, "rtt_ms": dict(shape.tier_ms), "links": links}


def _split(n: int, shares: tuple[float, float, float]) -> dict[str, int]:
    """``n`` nodes over cloud, fog and edge in these shares, at least one each."""
    raw = [max(1, int(n * s)) for s in shares]
    raw[2] = n - raw[0] - raw[1]
    if raw[2] < 1:
        raw = [1, 1, n - 2]
    return dict(zip(("cloud", "fog", "edge"), raw))


def _ms(rng: np.random.Generator, bounds: tuple[float, float]) -> float:
    return round(float(rng.uniform(*bounds)), 2)
