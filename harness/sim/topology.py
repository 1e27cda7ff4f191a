"""Build the simulator's Topology from a profile (and optionally a testbed state file)."""

from __future__ import annotations

import numpy as np

from harness.errors import UserError
from harness.sim.latency import LatencyModel, Topology
from harness.spec.app import App
from harness.spec.profile import Profile
from harness.spec.rtt import GroupedRTT
from harness.spec.testbed_state import TestbedState


def topology(profile: Profile, state: TestbedState | None = None, rtt: str = "measured") -> Topology:
    """Placement nodes are the nodes whose role is not client; the user sits on the client nodes
    (averaged). RTTs come from the testbed state when given, else from the profile; 'measured'
    falls back to 'configured' for pairs without a measurement. A calibrated profile's overheads
    are added: its call overhead to every RTT between placement nodes (a call to a pod on the
    same node included), its gateway overhead to the user's RTTs. The RTTs stay per group of
    nodes (``harness.spec.rtt``) where the state holds them so: a simulated testbed of any size."""
    prices: dict = {}  # node type -> its paper-003 costs, as the inventory gives them
    if state is not None:
        info = {n.name: (n.type, n.tier, n.cpus, n.memory_gb, n.role, n.site, n.cost, n.gpus) for n in state.nodes}
        prices = state.inventory.get("node_types", {})
        meas = state.rtt_measured_ms if rtt == "measured" else {}
        groups = _measured(meas, info, state.configured_rtt)
    else:
        def of_type(t: str) -> tuple:
            nt = profile.node_types[t]  # profiles before roles: the tier is the role
            return (t, nt["tier"], nt["cpus"], nt["memory_gb"], nt.get("role", nt["tier"]), None, nt.get("cost", 0.0),
                    nt.get("gpus", 0))
        info = {n: of_type(t) for n, t in profile.nodes.items()}
        conf = profile.rtt_ms.get("configured", {})
        meas = profile.rtt_ms.get("measured", {}) if rtt == "measured" else {}
        groups = _measured(meas, info, lambda: GroupedRTT.from_matrix(conf, info))

    call = gateway = 0.0
    if profile.calibration is not None:  # the overheads harness calibrate fitted (harness.scenarios.calibration)
        call, gateway = profile.calibration.call_overhead_ms, profile.calibration.gateway_overhead_ms
    hosts = [n for n, i in info.items() if i[4] != "client"]
    users = [n for n, i in info.items() if i[4] == "client"]
    if not users:
        raise UserError("the testbed has no client node: the user's position is unknown", field="nodes")
    table = groups.subset(hosts)
    user_ms: dict[int, float] = {}  # per group of hosts: the same mean for each of its nodes
    for n, g in zip(hosts, table.group):
        if g not in user_ms:
            user_ms[g] = np.mean([groups.get(u, n) for u in users]) + gateway
    return Topology(
        nodes=tuple(hosts), node_types=tuple(info[n][0] for n in hosts), tiers=tuple(info[n][1] for n in hosts),
        cpus=np.array([info[n][2] for n in hosts], float), memory_mib=np.array([info[n][3] * 1024 for n in hosts], float),
        rtt=None, rtt_group=np.array(table.group, dtype=np.int64).reshape(len(hosts)),
        rtt_table=np.array(table.ms, float).reshape(table.groups, table.groups) + call,
        rtt_self=np.array(table.self_ms, float).reshape(table.groups) + call,
        user_rtt=np.array([user_ms[g] for g in table.group], float),
        roles=tuple(info[n][4] for n in hosts), sites=tuple(info[n][5] for n in hosts),
        costs=np.array([info[n][6] for n in hosts], float), gpus=np.array([info[n][7] for n in hosts], float),
        pod_costs=np.array([prices.get(info[n][0], {}).get("pod_cost", 0.0) for n in hosts], float),
        data_costs=np.array([prices.get(info[n][0], {}).get("data_cost", 0.0) for n in hosts], float),
    )


def _measured(meas: dict, info: dict, configured) -> GroupedRTT:
    """The RTTs between the nodes of ``info``: the configured ones (``configured()``), or where
    ``meas`` has measurements, each pair's measurement and the configured RTT where it has none
    (every node a group of its own). A pair neither holds is a UserError."""
    try:
        conf = configured()
        if not meas:
            return conf
        return GroupedRTT.from_matrix(meas, info, fallback=conf)
    except KeyError as exc:
        pair = exc.args[0] if exc.args else "?"
        raise UserError(f"no RTT between nodes {pair}: the profile or state holds none; give the testbed it was "
                        "made for (--inventory or the testbed's state)", field="rtt_ms") from None


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
