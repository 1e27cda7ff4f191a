"""KubeDSM's workloads (paper 004, §6) as scenarios on harness's one ground: the m_σ replica
schedules, the scenario file that plays one, the cluster as the paper models it, and a schedule
played in simulation (``harness evaluate SCENARIO``'s run: ``harness.scenarios.session.run_simulated``)
for any policies.

The m_σ schedules (after the authors' generator): per cycle, deployment d's count is
round(N(m·k_d, σ·k_d)), at least 1, with k_d = the mean over resources of (edge capacity / number
of services) / d's request: m is the edge need as a multiple of the edge's capacity, split equally
over the deployments. As in the generator (genny's load_config), that capacity is each edge node's
less 1 core and 1 GB ("for safety"; what K3s's own pods and the kubelet leave): the authors'
published logs never show an edge node holding its full cores.

The paper's cluster (§4.1.1): the cloud's capacity has no limit (the testbed's cloud node has 22
cores, "enough in practice"), the edge nodes as they are (less ``system_reserved`` per node, for
what the system's pods hold, when a reading asks for it).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from harness import shipped
from harness.policies.contract import Policy
from harness.spec.app import App, load_app

INVENTORY = "inventories/kubedsm-local.yaml"
CYCLES, CYCLE_S = 12, 90.0  # the paper's 12 cycles of 90 s
WORKLOADS = [(m, 0.4) for m in (1.1, 1.2, 1.3, 1.4, 1.5, 1.6)] + [(1.5, s) for s in (0.1, 0.2, 0.3, 0.5)]
# the paper counts 11 (Figs. 4 and 5 both hold 1.5_0.4); 10 distinct schedules
GENERATOR_RESERVE = (1.0, 1024.0)  # cores, MiB per edge node: genny's load_config takes these off
# CHOSEN: how long a pod scaled down keeps its node's room. Kubernetes deletes a pod gracefully:
# it stays on its node, its requests counted by the scheduler, until its containers have exited
# and the kubelet has reported it — a second or two for a process that exits on SIGTERM, up to
# terminationGracePeriodSeconds (30 s) for one that does not. Pods created by the same scale-up
# are scheduled within that time, so they cannot use the room the scale-down frees. 2 s: the
# prompt case (harness's cells drain and exit at once); 0 frees the room before placing.
TERMINATING_S = 2.0
UNLIMITED = 100_000  # cores and GB of the paper's cloud


def workload_name(m: float, sigma: float) -> str:
    return f"{m:.1f}_{sigma:.1f}"


def app() -> App:
    return load_app(shipped.workload("kubedsm"))


def edge_capacity(reserve: tuple[float, float] = (0.0, 0.0)) -> np.ndarray:
    """(cores, MiB) of each edge node of the authors' cluster, less ``reserve`` per node."""
    from harness.spec.inventory import load_inventory

    inv = load_inventory(shipped.find(INVENTORY))
    edge = [inv.node_types[n.type] for n in inv.nodes if inv.node_types[n.type].tier == "edge"]
    return np.array([[t.cpus - reserve[0], t.memory_gb * 1024 - reserve[1]] for t in edge], float)


def m_sigma_schedule(a: App, m: float, sigma: float, seed: int, cycles: int = CYCLES,
                     reserve: tuple[float, float] = GENERATOR_RESERVE) -> list[dict[str, int]]:
    share = edge_capacity(reserve).sum(axis=0) / len(a.services)
    k = {s: float(np.mean(share / np.array([a.cpu_request(s), a.memory_request(s)]))) for s in a.services}
    rng = np.random.default_rng(seed)
    return [{s: max(1, int(round(rng.normal(m * k[s], sigma * k[s])))) for s in a.services} for _ in range(cycles)]


def scenario_doc(name: str, description: str, cycles: list[dict[str, int]], cycle_s: float, rate: float,
                 through_hpa: bool = False) -> dict:
    """A scenario playing ``cycles``: Table 5's app, one periodic load of ``rate`` req/s per
    deployment, each cycle's counts on time (or through the HPA's pace), KubeDSM's 1 s suggestion
    period."""
    schedule: dict = {"cycle_s": cycle_s, "cycles": cycles}
    if through_hpa:
        schedule["hpa"] = {"sync_s": 15, "scale_down_stabilization_s": 300}
    return {
        "name": name, "description": description, "duration_s": len(cycles) * cycle_s, "app": "kubedsm",
        "replicas": 1,
        "load": [{"entry": s, "mode": "periodic", "steps": [{"at_s": 0, "value": rate}]} for s in sorted(cycles[0])],
        "replica_schedule": schedule,
        "rescheduler": {"period_s": 1, "start_s": 1, "max_moves": 8},
    }


def inventory(folder: Path, system_reserved: tuple[float, float] = (0.0, 0.0), unlimited_cloud: bool = True) -> Path:
    """The authors' cluster as the paper models it, written into ``folder``: the cloud unlimited,
    each edge node less ``system_reserved`` (cores, MiB). Its name stays ``kubedsm-local``, so the
    committed profile is the one found."""
    inv = yaml.safe_load(shipped.find(INVENTORY).read_text())
    for t in inv["node_types"].values():
        if t["tier"] == "cloud" and unlimited_cloud:
            t["cpus"], t["memory_gb"] = UNLIMITED, UNLIMITED
        elif t["tier"] == "edge":
            t["cpus"] = t["cpus"] - system_reserved[0]
            t["memory_gb"] = t["memory_gb"] - system_reserved[1] / 1024
    out = folder / "kubedsm-paper.yaml"
    out.write_text(yaml.safe_dump(inv, sort_keys=False))
    return out


@dataclass
class Ground:
    """Schedules played on harness's ground (one simulated run per policy), results under ``out``."""

    out: Path
    system_reserved: tuple[float, float] = (0.0, 0.0)
    terminating_s: float = TERMINATING_S
    through_hpa: bool = False
    cycle_s: float = CYCLE_S
    rate: float = 0.1  # req/s per deployment: the edge ratio does not depend on it; requests cost time

    def __post_init__(self):
        from harness.spec.inventory import load_inventory
        from harness.testbed.simulated import simulated_state

        self._tmp = Path(tempfile.mkdtemp(prefix="kubedsm-ground-"))
        self.state = simulated_state(load_inventory(inventory(self._tmp, self.system_reserved)))

    def play(self, name: str, cycles: list[dict[str, int]], policies: dict[str, Policy], seed: int = 0) -> dict[str, dict]:
        """Each policy's summary (``metrics``: edge ratio, its spread, by service, migrations,
        rejected pods) of one simulated run of ``cycles``."""
        from harness.scenarios.session import prepare, run_simulated

        path = self._tmp / f"{name}.yaml"
        path.write_text(yaml.safe_dump(scenario_doc(name, f"KubeDSM schedule {name}", cycles, self.cycle_s, self.rate,
                                                    self.through_hpa), sort_keys=False))
        session = prepare(str(path), ["default"], self.state, None, None, shipped.find("models"), self.out)
        session.policies = dict(policies)
        rows = run_simulated(self.state, session, 1, first_seed=seed, terminating_s=self.terminating_s)
        return {r["policy"]: r for r in rows}

    def view(self):
        """The cluster's empty view (the oracle's edge)."""
        from harness.rescheduler.live import LiveView
        from harness.spec.profile import load_profile
        from harness.testbed.simulated import SimCluster

        a = app()
        return LiveView(a, load_profile(shipped.profile("kubedsm", "kubedsm-local")), self.state,
                        SimCluster(self.state)).view()[0]
