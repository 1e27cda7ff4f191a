"""HephaestusForge's world settings (``harness.families.hephaestus.world`` describes the world):
Table 4's cluster types, the bounds the reward normalises by, Table 6's weightings, the
Cloud2Edge services requests are drawn from, a world's config, and the sites mode's clusters
read from an inventory."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np

# Table 4 (Amazon EC2 on-demand): cores, memory GB, cost τ_c
CLUSTER_TYPES = (("edge-tier-1", 2.0, 2.0, 1.0), ("edge-tier-2", 2.0, 4.0, 2.0), ("fog-tier-1", 2.0, 8.0, 4.0),
                 ("fog-tier-2", 4.0, 16.0, 8.0), ("cloud", 8.0, 32.0, 16.0))
MIN_DELAY, MAX_DELAY = 1.0, 1000.0  # ms
MIN_COST, MAX_COST = 1.0, 16.0
SPREADS = ("ffd", "ffi", "bf1b1")
EXTRA_ROWS = len(SPREADS) + 1  # the spread actions and reject
FEATURES = 10

# Table 6's weightings (ω_l, ω_c, ω_i)
OBJECTIVES = {"latency": (1.0, 0.0, 0.0), "cost": (0.0, 1.0, 0.0), "inequality": (0.0, 0.0, 1.0),
              "latcost": (0.5, 0.5, 0.0), "latineq": (0.5, 0.0, 0.5), "costineq": (0.0, 0.5, 0.5),
              "balanced": (0.4, 0.3, 0.3), "favorlat": (0.6, 0.2, 0.2)}


@functools.lru_cache(maxsize=1)
def c2e_services() -> tuple[tuple[str, float, float, float], ...]:
    """(name, cores, memory GB, threshold ms) of the Cloud2Edge deployments (harness/data/c2e.yaml),
    read once: every env and every admission decision builds a world from them."""
    import yaml

    doc = yaml.safe_load((Path(__file__).resolve().parents[2] / "data" / "c2e.yaml").read_text())
    return tuple((n, float(s["cpu"]), float(s["memory_gb"]), float(s["threshold_ms"])) for n, s in doc["services"].items())


@dataclass
class MultiClusterConfig:
    clusters: int = 4
    arrival_rate: float = 100.0  # requests per time unit (the code's)
    mean_lifetime: float = 1.0  # time units
    episode_steps: int = 100
    replicas: tuple[int, int] = (1, 8)  # R uniform in [low, high): the code's default, which the logs match
    fill: float = 0.95  # the share of a cluster's capacity replicas may take
    background: tuple[float, float] = (0.0, 0.2)  # cores and GB allocated per cluster at reset, uniform
    objective: str = "favorlat"  # Table 6's weighting (the code's default)
    hf_compat: bool = False
    inventory: Optional[str] = None  # the sites mode: the clusters are this inventory's sites (see world.py)

    @property
    def weights(self) -> tuple[float, float, float]:
        return OBJECTIVES[self.objective]


@dataclass(frozen=True)
class Sites:
    """Fixed clusters for the sites mode: one per site, in ``names`` order."""

    names: tuple[str, ...]
    cap_cpu: np.ndarray  # cores
    cap_mem: np.ndarray  # GB
    cost: np.ndarray  # per replica: the mean cost per hour of the site's nodes
    lat: np.ndarray  # (C, C) ms between the sites, 0 on the diagonal


def sites_of(inventory) -> Sites:
    """The sites of an inventory (a path or a loaded ``Inventory``); clients and nodes without a
    site are no cluster. A bad file or fewer than two sites is one UserError line."""
    from harness import shipped
    from harness.errors import UserError
    from harness.spec.inventory import load_inventory

    inv = load_inventory(shipped.find(inventory)) if isinstance(inventory, (str, Path)) else inventory
    nodes: dict[str, list] = {}
    for n in inv.nodes:
        if n.site and inv.role(inv.node_type(n).tier) != "client":
            nodes.setdefault(n.site, []).append(n)
    if len(nodes) < 2:
        raise UserError(f"{len(nodes)} site(s) with nodes pods may use; the sites mode needs two or more "
                        "(give nodes a 'site')", source=str(inventory), field="nodes")
    names = tuple(sorted(nodes))
    typ = inv.node_type
    index = inv.link_values("rtt_ms")
    lat = np.array([[0.0 if a == b else float(np.mean([inv.pair_rtt(x, y, index) for x in nodes[a] for y in nodes[b]]))
                     for b in names] for a in names])
    return Sites(names, np.array([sum(typ(n).cpus for n in nodes[s]) for s in names], float),
                 np.array([sum(typ(n).memory_gb for n in nodes[s]) for s in names], float),
                 np.array([np.mean([typ(n).cost for n in nodes[s]]) for s in names], float), lat)
