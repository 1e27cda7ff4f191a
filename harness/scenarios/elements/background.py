"""Other tenants on the nodes (REACH's seeded background utilisation): before the app is deployed,
each node gets a share of its CPU and memory taken, drawn from the run's seed (uniform in the
scenario's ranges, all nodes' CPU first, then their memory, as REACH's scenarios draw them), held
in every view the policies get for the whole run."""

from __future__ import annotations

import numpy as np

SIMULATION_ASSUMES = ""  # the same in both worlds: room held in what the policies see, nothing running in it


def wanted(sc) -> bool:
    return sc.background is not None


def before_deploy(run) -> None:
    bg, view = run.plan.scenario.background, run.view
    nodes = {n.name: n for n in run.plan.state.nodes}
    rng = np.random.default_rng(run.plan.seed or 0)
    cpu = rng.uniform(*bg.cpu, len(view.nodes))
    mem = rng.uniform(*bg.memory, len(view.nodes))
    view.background = {n: (float(c * nodes[n].cpus), float(m * nodes[n].memory_gb * 1024))
                       for n, c, m in zip(view.nodes, cpu, mem)}


def driver(run):
    held = run.view.background
    run.event("background", cores={n: round(c, 3) for n, (c, _) in held.items()},
              memory_mib={n: round(m, 1) for n, (_, m) in held.items()})
    return
    yield
