"""The simulated testbed: the Cluster interface over a record of pods, nodes and RTTs, in the run's
virtual time, with no process behind any pod. It is what ``harness evaluate SCENARIO`` plays a
scenario on, so every scenario element (deployment, faults and self-healing, moves, the autoscaler,
replica schedules, request streams) acts through the same interface as on a real testbed; what the
pods' latency is, the simulator says (``harness.scenarios.simrun``).

What a simulated cluster cannot be is said where it differs. A pod gets ready ``start_s(node)``
seconds of the run's clock after its start (0 unless the run gives the profile's pod lifecycle:
``sim.lifecycle``; live, a cell takes about 1-3 s): whoever waits for it (``wait_ready``) waits
that long on the run's clock (``sleep_until``), as a make-before-break move, a self-healing
placement or a scale-up waits live. A pod stopped holds its node's room for ``terminating_s`` of
the run's clock when that is given, else for ``stop_s(node)`` (Kubernetes' graceful deletion: a
pod that exits on SIGTERM goes in a second or two; the local testbed's cells in a fraction of
one). A pause takes no time, a process started in a node (``start_process``) only records that it
runs (a fault kind that needs its effect declares a simulated one), and ``measure_rtt`` gives the
configured RTTs.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Callable, Mapping, Sequence

from harness.errors import TestbedError
from harness.spec.inventory import Inventory
from harness.spec.rtt import GroupedRTT
from harness.spec.testbed_state import NodeState, TestbedState
from harness.testbed.cluster import Cluster, NodeProcess
from harness.testbed.pods import Pod, pod_name


class SimProcess(NodeProcess):
    """A process a simulated node "runs": alive until terminated or killed."""

    def __init__(self, node: str, pid: int, argv: Sequence[str]):
        self.node, self.pid, self.argv = node, pid, list(argv)
        self.code: int | None = None

    def poll(self) -> int | None:
        return self.code

    def wait(self, timeout: float | None = None) -> int:
        if self.code is None:
            self.code = 0  # a simulated process ends when asked about its end
        return self.code

    def terminate(self) -> None:
        self.code = -15

    def kill(self) -> None:
        self.code = -9


def simulated_state(inv: Inventory) -> TestbedState:
    """The testbed an inventory describes, as a state file would record it, never provisioned: its
    nodes (expanded as the local backend names them) and configured RTTs, held per group of nodes
    (``harness.spec.rtt``: per tier and site, not per pair)."""
    from harness.testbed.local.layout import layout_for

    layout = layout_for(inv)
    return TestbedState(
        backend="sim", name=inv.name, status="ready", inventory_checksum=inv.checksum(),
        inventory=inv.model_dump(mode="json"), created="",
        nodes=[NodeState(name=n.name, type=n.type, tier=n.tier, address=n.address, cpus=n.cpus,
                         memory_gb=n.memory_gb, speed=n.speed, role=n.role, site=n.site, cost=n.cost, gpus=n.gpus)
               for n in layout.nodes],
        rtt_groups=inv.rtt_groups().to_json(), bandwidth_mbit=inv.bandwidth_matrix())


def shared_finish(works: list[float]) -> list[float]:
    """Seconds from now until each of ``works`` (seconds of a node's CPU each, started together)
    is done when they share the node (processor sharing: k at once each progress at 1/k): pods
    started together on a node are ready together, later than one alone."""
    order = sorted(range(len(works)), key=lambda i: works[i])
    out, t, prev, k = [0.0] * len(works), 0.0, 0.0, len(works)
    for rank, i in enumerate(order):
        t += (k - rank) * (works[i] - prev)
        prev = works[i]
        out[i] = t
    return out


def shared_progress(works: list[float], seconds: float) -> list[float]:
    """What is left of each of ``works`` after ``seconds`` of sharing the node (0: done)."""
    left = list(works)
    while seconds > 1e-12:
        active = [i for i, w in enumerate(left) if w > 1e-12]
        if not active:
            break
        step = min(min(left[i] for i in active), seconds / len(active))
        for i in active:
            left[i] -= step
        seconds -= step * len(active)
    return [max(0.0, w) for w in left]


class SimCluster(Cluster):
    def __init__(self, state: TestbedState, terminating_s: float = 0.0):
        self.state = state
        self.terminating_s = terminating_s
        self.clock: Callable[[], float] = lambda: 0.0  # the run's clock (SimRun sets it)
        self.sleep_until: Callable[[float], None] = lambda t: None  # wait on the run's clock until t (SimRun sets it)
        self.start_s: Callable[[str], float] = lambda node: 0.0  # a pod's start to ready on this node
        self.stop_s: Callable[[str], float] = lambda node: 0.0  # a pod's stop to gone, unless terminating_s
        self._ready_at: dict[str, float] = {}  # pod -> when it is ready on the run's clock
        self._starting: dict[str, tuple[float, dict[str, float]]] = {}  # node -> (as of, pod -> start work left)
        self._terminating: list[tuple[float, Pod]] = []  # (gone at, pod): stopped, still holding its room
        self._nodes = list(state.nodes)
        self._by_name = {n.name: n for n in self._nodes}
        self._up = {n.name: True for n in self._nodes}
        self._rtt = state.configured_rtt()
        self._changed: dict[tuple[str, str], float] = {}  # pairs set while running, not yet in _rtt
        self._app = None
        self._pods: list[Pod] = []  # serving or about to, oldest first
        self._retired: list[Pod] = []  # out of the endpoints, not yet stopped
        self._dead: set[str] = set()  # crashed, still published
        self._serial = 0
        self.processes: list[SimProcess] = []

    # nodes ----------------------------------------------------------------
    @property
    def nodes(self) -> list[NodeState]:
        return self._nodes

    def node(self, name: str) -> NodeState:
        if name not in self._by_name:
            return super().node(name)  # its error
        return self._by_name[name]

    def node_up(self, name: str) -> bool:
        return self._up[name]

    def fail_node(self, name: str) -> list[Pod]:
        self._up[name] = False
        self._starting.pop(name, None)  # its starts die with it
        lost = [p for p in self._pods if p.node == name]
        self._pods = [p for p in self._pods if p.node != name]
        self._retired = [p for p in self._retired if p.node != name]
        self._terminating = [(t, p) for t, p in self._terminating if p.node != name]
        for proc in self.processes:
            if proc.node == name and proc.code is None:
                proc.kill()
        return lost

    def recover_node(self, name: str) -> None:
        self._up[name] = True

    def cpu_scale(self, name: str) -> float:
        return 1.0  # the simulator counts CPU in the cores pods request

    def rtt_configured(self) -> dict[str, dict[str, float]]:
        return self.rtt_groups().matrix()

    def rtt_groups(self) -> GroupedRTT:
        if self._changed:  # a latency fault sets many pairs: split their nodes off once, not per pair
            self._rtt, self._changed = self._rtt.with_pairs(self._changed), {}
        return self._rtt

    def set_latency(self, a: str, b: str, rtt_ms: float) -> None:
        self._changed[(a, b)] = float(rtt_ms)

    def measure_rtt(self) -> dict[str, dict[str, float | None]]:
        return {a: {b: (v if self._up[a] and self._up[b] else None) for b, v in row.items()}
                for a, row in self.rtt_configured().items()}

    def pause(self, seconds: float) -> None:
        """A pause takes no time in a simulated run (the grace before stopping a pod)."""

    # processes ------------------------------------------------------------
    def start_process(self, node: str, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
                      log: Path | None = None, cgroup: bool = True) -> SimProcess:
        if not self._up[node]:
            raise TestbedError(f"node {node} is down")
        proc = SimProcess(node, 100000 + len(self.processes), argv)
        self.processes.append(proc)
        return proc

    def run_in_node(self, node: str, argv: Sequence[str], timeout: float = 60) -> subprocess.CompletedProcess:
        raise TestbedError("a simulated node runs no commands")

    # pods -----------------------------------------------------------------
    def set_app(self, app) -> None:
        self._app = app

    def app(self):
        return self._app

    def pods_and_leaving(self) -> tuple[list[Pod], list[Pod]]:
        now = self.clock()
        self._terminating = [(t, p) for t, p in self._terminating if t > now + 1e-9]
        return list(self._pods), list(self._retired) + [p for _, p in self._terminating]

    def start_pod(self, service: str, node: str) -> Pod:
        app = self._app
        if app is None or service not in app.services:
            raise TestbedError(f"no app with service {service!r} is set; deploy the app first")
        if not self._up[node]:
            raise TestbedError(f"node {node} is down")
        self.check_binding(app, service, node)
        self._serial += 1
        pod = Pod(name=pod_name(service, self._serial), service=service, node=node, address=self.node(node).address,
                  port=0)
        self._pods.append(pod)
        self._start_beside(node, pod.name, self.start_s(node))
        return pod

    def _start_beside(self, node: str, name: str | None, work: float = 0.0) -> None:
        """A pod's start (``work`` s, its start alone) sharing the node's CPU with the starts still
        under way there: as live, where six pods healed at once on a 0.9-core node are ready after
        2.8 s, not the 0.43 s one alone takes. Each waiting pod's ready time is set again (also
        when ``name`` is None: a start stopped half-way shares no more)."""
        now = self.clock()
        since, left = self._starting.get(node, (now, {}))
        left = {p: w for p, w in zip(left, shared_progress(list(left.values()), now - since))
                if w > 0 and p in self._ready_at}
        if name is not None:
            left[name] = work
        self._starting[node] = (now, left)
        for p, t in zip(left, shared_finish(list(left.values()))):
            self._ready_at[p] = now + t

    def ready_at(self, pod: Pod) -> float:
        """When the pod is ready, on the run's clock."""
        return self._ready_at.get(pod.name, self.clock())

    def wait_ready(self, pod: Pod, timeout: float) -> None:
        if not any(p.name == pod.name for p in reversed(self._pods)):  # the pod just started is the last
            raise TestbedError(f"pod {pod.name} is gone")
        now, at = self.clock(), self.ready_at(pod)
        if at - now > timeout:
            self.sleep_until(now + timeout)
            raise TestbedError(f"pod {pod.name} on {pod.node} not ready after {timeout:.0f}s")
        self.sleep_until(at)
        if not self._up[pod.node]:  # its node failed while it started
            raise TestbedError(f"pod {pod.name}: its node {pod.node} is down")

    def retire_pod(self, pod: Pod) -> None:
        if pod in self._pods:
            self._pods.remove(pod)
            self._retired.append(pod)

    def stop_pod(self, pod: Pod, drain_seconds: float = 10) -> None:
        if all(p.name != pod.name for p in self._pods + self._retired):
            return  # stopped already (terminating, or gone): it holds its room once
        hold = self.terminating_s if self.terminating_s > 0 else self.stop_s(pod.node)
        if hold > 0 and self._up[pod.node]:
            self._terminating.append((self.clock() + hold, pod))
        if self._ready_at.pop(pod.name, None) is not None and pod.name in self._starting.get(pod.node, (0.0, {}))[1]:
            self._start_beside(pod.node, None)
        self._pods = [p for p in self._pods if p.name != pod.name]
        self._retired = [p for p in self._retired if p.name != pod.name]
        self._dead.discard(pod.name)

    def pod_alive(self, pod: Pod) -> bool:
        return pod.name not in self._dead and self._up[pod.node]

    def crashed_pods(self) -> list[Pod]:
        if not self._dead:  # the crash watch asks every second: no crash, no pass over the pods
            return []
        return super().crashed_pods()

    def kill_pod(self, pod: Pod) -> None:
        self._dead.add(pod.name)

    @property
    def endpoints_file(self) -> Path:
        raise TestbedError("a simulated cluster has no endpoints file")

    def publish(self) -> None:
        """Nothing to publish: the simulator reads the pods directly."""
