"""The Cluster interface: everything above the testbed (profiling, deployment, policies, load,
faults) talks to the testbed only through this, so it runs unchanged on any backend."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Mapping, Sequence

from harness.spec.rtt import GroupedRTT
from harness.spec.testbed_state import NodeState, TestbedState

if TYPE_CHECKING:
    import subprocess

    from harness.spec.app import App
    from harness.testbed.pods import Pod


class NodeProcess(ABC):
    """A process running inside a node (a pod's container on Kubernetes)."""

    node: str
    pid: int

    @abstractmethod
    def poll(self) -> int | None: ...

    @abstractmethod
    def wait(self, timeout: float | None = None) -> int: ...

    @abstractmethod
    def terminate(self) -> None: ...

    @abstractmethod
    def kill(self) -> None: ...


class PopenProcess(NodeProcess):
    """A NodeProcess that is a child of the harness (subprocess.Popen)."""

    def __init__(self, node: str, popen: "subprocess.Popen"):
        self.node, self.popen, self.pid = node, popen, popen.pid

    def poll(self) -> int | None:
        return self.popen.poll()

    def wait(self, timeout: float | None = None) -> int:
        return self.popen.wait(timeout)

    def terminate(self) -> None:
        if self.popen.poll() is None:
            self.popen.terminate()

    def kill(self) -> None:
        if self.popen.poll() is None:
            self.popen.kill()


class Cluster(ABC):
    """What every backend provides and everything above the testbed uses: nothing else of a
    backend is reached from outside it (the import-linter contracts and this class keep it so)."""

    backend: str  # the name in harness.testbed.backends
    state: TestbedState  # the testbed as provisioned (nodes, RTTs, Prometheus URL, backend data)

    @property
    @abstractmethod
    def nodes(self) -> list[NodeState]: ...

    def node(self, name: str) -> NodeState:
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(f"no node named {name!r} (nodes: {', '.join(n.name for n in self.nodes)})")

    @abstractmethod
    def node_up(self, name: str) -> bool: ...

    @abstractmethod
    def fail_node(self, name: str) -> list["Pod"]:
        """Crash the node: every process on it dies and its links go down. Returns the pods lost
        (already out of the endpoints), for self-healing to place again."""

    @abstractmethod
    def recover_node(self, name: str) -> None:
        """Bring a failed node back, empty (as a rebooted machine)."""

    def cpu_scale(self, name: str) -> float:
        """Logical cores (what the scheduler and pod requests count) per core of CPU time a
        process really gets on this node: 1 on real machines; an emulated node that stands for
        4 cores with 0.6 of a host core has 4 / 0.6. The HPA reads CPU in logical cores."""
        return 1.0

    @abstractmethod
    def rtt_configured(self) -> dict[str, dict[str, float]]: ...

    def rtt_groups(self) -> GroupedRTT:
        """``rtt_configured`` per group of nodes (``harness.spec.rtt``); a backend that holds its
        RTTs so (the simulated one) gives them without expanding every pair."""
        return GroupedRTT.from_matrix(self.rtt_configured())

    @abstractmethod
    def set_latency(self, a: str, b: str, rtt_ms: float) -> None:
        """Change the round-trip time between two nodes while running."""

    def pause(self, seconds: float) -> None:
        """Wait on the testbed's clock: a real sleep (a simulated testbed takes none)."""
        time.sleep(seconds)

    @abstractmethod
    def measure_rtt(self) -> dict[str, dict[str, float | None]]: ...

    def measure_rtt_spread(self) -> dict[str, dict[str, float | None]]:
        """Between every two nodes up, the standard deviation of the round trip in ms (the link's
        jitter, which the simulator draws each request's delays with: ``Profile.rtt_sd_ms``); {}
        from a backend that cannot tell (the simulator then draws none)."""
        return {}

    @abstractmethod
    def start_process(self, node: str, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
                      log: Path | None = None, cgroup: str | None = None) -> NodeProcess:
        """Start ``argv`` inside ``node`` (its network and its CPU/memory caps)."""

    @abstractmethod
    def run_in_node(self, node: str, argv: Sequence[str], timeout: float = 60) -> "subprocess.CompletedProcess":
        """Run a command to completion inside ``node`` and capture its output (text)."""

    # ------------------------------------------------------------ pods
    # The primitives a backend provides; deploy, move_pod and undeploy in testbed/pods.py
    # compose them the same way on every backend.

    @abstractmethod
    def set_app(self, app: "App") -> None:
        """The app whose services the next pods run (a ConfigMap on Kubernetes)."""

    @abstractmethod
    def app(self) -> "App | None": ...

    @abstractmethod
    def pods_and_leaving(self) -> tuple[list["Pod"], list["Pod"]]:
        """From one read of the cluster: the pods that serve (``pods``) and those on their way out
        (``leaving``), each oldest first."""

    def pods(self) -> list["Pod"]:
        """Pods that serve (published or about to be), oldest first."""
        return self.pods_and_leaving()[0]

    def leaving(self) -> list["Pod"]:
        """Pods that no longer serve but still hold their node's room: retired and not yet stopped,
        or (Kubernetes) terminating. A pod placed now cannot use that room: kube-scheduler counts a
        terminating pod's requests, and the kubelet admits a pod only into what the pods still on
        its node leave."""
        return self.pods_and_leaving()[1]

    @abstractmethod
    def start_pod(self, service: str, node: str) -> "Pod":
        """Start one replica of ``service`` on ``node``; it is not yet published. Refuses a node the
        app's placement constraints forbid (``check_binding``)."""

    def check_binding(self, app: "App", service: str, node: str) -> None:
        """What kube-scheduler's NodeAffinity and InterPodAffinity filters would refuse: a node not in
        the service's node_affinity, or one already holding its pod under pod_antiaffinity."""
        from harness.errors import TestbedError

        spec = app.services[service]
        if spec.node_affinity is None and not spec.pod_antiaffinity:
            return  # no constraint to break (and no pass over every pod)
        peers = [p.node for p in self.pods() if p.service == service]
        problem = app.constraint_problem({service: peers + [node]})
        if problem:
            raise TestbedError(f"a {service} pod on {node} breaks a placement constraint: {problem[1]}")

    @abstractmethod
    def wait_ready(self, pod: "Pod", timeout: float) -> None:
        """Return once the pod serves; raise TestbedError when it exits, its node is down (a node
        that fails while the pod starts: within seconds), or ``timeout`` passes."""

    @abstractmethod
    def retire_pod(self, pod: "Pod") -> None:
        """Take the pod out of the endpoints at the next publish; it keeps serving until stopped."""

    @abstractmethod
    def stop_pod(self, pod: "Pod", drain_seconds: float = 10) -> None:
        """Stop the pod, letting in-flight requests finish for up to ``drain_seconds``."""

    @abstractmethod
    def pod_alive(self, pod: "Pod") -> bool:
        """Whether the pod's process still runs (a crashed cell is not; Kubernetes: container running)."""

    def crashed_pods(self) -> list["Pod"]:
        """The serving pods whose process died on a node that is up (what the crash watch replaces),
        oldest first. A backend that records crashes lists them without asking every pod."""
        return [p for p in self.pods() if not self.pod_alive(p) and self.node_up(p.node)]

    @abstractmethod
    def kill_pod(self, pod: "Pod") -> None:
        """Crash the pod at once (SIGKILL), leaving it published: callers see errors until it is replaced."""

    def stray_processes(self) -> dict[str, list[int]]:
        """Processes on the nodes that no recorded pod accounts for (a killed run's cells and load
        generator): node -> pids. A backend whose pods cannot outlive their record has none."""
        return {}

    def stop_strays(self, grace_s: float = 3.0) -> int:
        """Stop every stray process (SIGTERM, then SIGKILL after ``grace_s``); how many there were."""
        return 0

    @property
    @abstractmethod
    def endpoints_file(self) -> Path:
        """The file that maps each service to its serving addresses (what the cells and the load
        generator read; on Kubernetes it would name each Service's address)."""

    @abstractmethod
    def publish(self) -> None:
        """Make the current (non-retired, ready) pods the endpoints callers and Prometheus see."""

    def endpoints(self, service: str) -> list[str]:
        return [p.endpoint for p in self.pods() if p.service == service]
