"""Build the simulator's Topology from a profile (and optionally a testbed state file)."""

from __future__ import annotations

import numpy as np

from harness.errors import UserError
from harness.sim.latency import LatencyModel, Topology
from harness.spec.app import App
from harness.spec.profile import Profile
from harness.spec.testbed_state import TestbedState


def topology(profile: Profile, state: TestbedState | None = None, rtt: str = "measured") -> Topology:
    """Placement nodes are the nodes whose role is not client; the user sits on the client nodes
    (averaged). RTTs come from the testbed state when given, else from the profile; 'measured'
    falls back to 'configured' for pairs without a measurement. A calibrated profile's overheads
    are added: its call overhead to every RTT between placement nodes (a call to a pod on the
    same node included), its gateway overhead to the user's RTTs."""
    prices: dict = {}  # node type -> its paper-003 costs, as the inventory gives them
    if state is not None:
        info = {n.name: (n.type, n.tier, n.cpus, n.memory_gb, n.role, n.site, n.cost, n.gpus) for n in state.nodes}
        prices = state.inventory.get("node_types", {})
        conf, meas = state.rtt_configured_ms, state.rtt_measured_ms
    else:
        def of_type(t: str) -> tuple:
            nt = profile.node_types[t]  # profiles before roles: the tier is the role
            return (t, nt["tier"], nt["cpus"], nt["memory_gb"], nt.get("role", nt["tier"]), None, nt.get("cost", 0.0),
                    nt.get("gpus", 0))
        info = {n: of_type(t) for n, t in profile.nodes.items()}
        conf, meas = profile.rtt_ms.get("configured", {}), profile.rtt_ms.get("measured", {})

    def d(a: str, b: str) -> float:
        if a == b:
            return 0.0
        v = meas.get(a, {}).get(b) if rtt == "measured" else None
        return float(v if v is not None else conf[a][b])

    call = gateway = 0.0
    if profile.calibration is not None:  # the overheads harness calibrate fitted (harness.scenarios.calibration)
        call, gateway = profile.calibration.call_overhead_ms, profile.calibration.gateway_overhead_ms
    hosts = [n for n, i in info.items() if i[4] != "client"]
    users = [n for n, i in info.items() if i[4] == "client"]
    if not users:
        raise UserError("the testbed has no client node: the user's position is unknown", field="nodes")
    return Topology(
        nodes=tuple(hosts), node_types=tuple(info[n][0] for n in hosts), tiers=tuple(info[n][1] for n in hosts),
        cpus=np.array([info[n][2] for n in hosts], float), memory_mib=np.array([info[n][3] * 1024 for n in hosts], float),
        rtt=np.array([[d(a, b) + call for b in hosts] for a in hosts]),
        user_rtt=np.array([np.mean([d(u, n) for u in users]) + gateway for n in hosts]),
        roles=tuple(info[n][4] for n in hosts), sites=tuple(info[n][5] for n in hosts),
        costs=np.array([info[n][6] for n in hosts], float), gpus=np.array([info[n][7] for n in hosts], float),
        pod_costs=np.array([prices.get(info[n][0], {}).get("pod_cost", 0.0) for n in hosts], float),
        data_costs=np.array([prices.get(info[n][0], {}).get("data_cost", 0.0) for n in hosts], float),
    )


def model_for(app: App, profile: Profile, state: TestbedState | None = None, rtt: str = "measured",
              source: str = "profile") -> LatencyModel:
    topo = topology(profile, state, rtt)
    missing = [(s, t) for s in app.services for t in set(topo.node_types) if t not in profile.services.get(s, {})]
    if missing:
        s, t = missing[0]
        raise UserError(f"no execution time for service {s!r} on node type {t!r}; profile the app on this testbed",
                        source=source, field=f"services.{s}")
    exec_ms = {s: {t: profile.services[s][t].mean_ms for t in set(topo.node_types)} for s in app.services}
    return LatencyModel(app, exec_ms, topo)
