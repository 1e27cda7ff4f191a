"""A modelled profile of a generated app on a generated (or any) inventory: what ``harness
evaluate`` needs beside them, written without a testbed to measure on.

Each service runs the shipped Chain's loader with its CPU stress repeated ``trials`` times
(``harness.generators.callgraph``). Its mean time on a node type is BASE_MS + PER_TRIAL_MS ×
trials on the fastest type, times the fastest speed over the type's (the local testbed caps a
node's CPU by its speed): the line through Chain's two such services measured on the fastest type
of ``profiles/chain.rollout-basic-local.json`` (2 trials 8.95 ms, 4 trials 16.94 ms). Spread as
measured there: std 0.15 of the mean, median 0.95 and p95 1.33 times it. The profile says so in
its ``method``; ``harness profile`` on a testbed measures the real one.

The profile holds no RTTs: the simulator reads them from the inventory (``--inventory``), per
group of nodes, whatever the size.
"""

from __future__ import annotations

BASE_MS = 0.95
PER_TRIAL_MS = 4.0
STD, P50, P95 = 0.15, 0.95, 1.33
METHOD = ("modelled by harness.generators.profile, not measured: {base:g} + {per:g} ms per CPU-stress trial on the "
          "fastest type, times its speed over the type's (fitted to profiles/chain.rollout-basic-local.json)")


def modelled_profile(app: dict, inventory: dict) -> dict:
    """The profile of ``app`` (a wrapped workmodel whose services run the loader) on the
    inventory's node types, as a document (``harness.spec.profile.Profile``)."""
    types = inventory["node_types"]
    fastest = max(t["speed"] for t in types.values())
    hosts = {name: t for name, t in types.items() if t["tier"] != "client" and
             inventory.get("tiers", {}).get(t["tier"], {}).get("role", t["tier"]) != "client"}
    services = {}
    for name, spec in app["services"].items():
        (job, params), = spec["internal_service"].items()
        trials = params.get("cpu_stress", {}).get("trials", 1) if job == "loader" else 1
        base = BASE_MS + PER_TRIAL_MS * trials
        services[name] = {t: _timing(base * fastest / nt["speed"]) for t, nt in hosts.items()}
    return {"app": app["name"], "testbed": inventory.get("name", "testbed"), "created": "", "harness_version": "",
            "method": METHOD.format(base=BASE_MS, per=PER_TRIAL_MS),
            "node_types": {t: {k: nt[k] for k in ("tier", "cpus", "memory_gb", "speed", "cost") if k in nt}
                           for t, nt in types.items()},
            "nodes": {n["name"]: n["type"] for n in inventory["nodes"]}, "services": services, "rtt_ms": {}}


def _timing(mean: float) -> dict:
    return {"mean_ms": round(mean, 3), "p50_ms": round(mean * P50, 3), "p95_ms": round(mean * P95, 3),
            "std_ms": round(mean * STD, 3), "samples": 1}
