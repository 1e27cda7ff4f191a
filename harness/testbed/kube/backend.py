"""The Kubernetes (K3s) backend of the Cluster interface, on the official kubernetes client.

How the Cluster primitives map onto Kubernetes:

- a service is a Deployment with ``schedulerName: harness-scheduler`` and no scheduler of that
  name, so every pod its ReplicaSet creates stays unbound until the harness binds it;
- ``start_pod`` binds an unbound pod of the service to the chosen node (Binding subresource),
  scaling the Deployment up by one first when none is waiting;
- ``publish`` labels pods ``harness.io/serving=true``; the Service selects only those, so a new
  pod takes traffic once the harness says so and its readiness probe agrees;
- ``retire_pod`` removes the label (out of the Service at once, the pod keeps its in-flight work);
- ``stop_pod`` marks the pod with the lowest ``controller.kubernetes.io/pod-deletion-cost`` and
  scales the Deployment down by one: the ReplicaSet controller deletes exactly that pod, which
  gets SIGTERM and its grace period to drain (a direct delete would make the controller create a
  replacement);
- ``kill_pod`` deletes the pod with grace 0 (its container gets SIGKILL). Unlike the local
  backend, Kubernetes also drops it from the Service at once; the harness keeps listing it as a
  dead pod until it is stopped, so self-healing replaces it as on the local backend;
- ``fail_node`` takes the node's pods out of the Service, really stops the node (node-power.yml:
  k3s-killall.sh) and force-deletes its pods, whose replacements wait unbound for self-healing.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Mapping, Sequence

from kubernetes import client
from kubernetes.client.rest import ApiException

from harness.errors import TestbedError
from harness.spec.app import App, parse_app
from harness.spec.testbed_state import NodeState, TestbedState, save_state
from harness.testbed.cluster import Cluster, PopenProcess
from harness.testbed.kube import manifests
from harness.testbed.kube.apply import apply_all
from harness.testbed.kube.node_power import NodePower
from harness.testbed.pods import Pod

SERVING = "harness.io/serving"
RETIRED = "harness.io/retired"
DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
STOPPED_COST = str(-(2 ** 31) + 1)  # the lowest: the ReplicaSet deletes this pod first; also marks one stop_pod took
CELL_PORT = 8080
# container states that will not get better by waiting
FATAL_WAITING = {"ErrImageNeverPull", "ImagePullBackOff", "ErrImagePull", "CrashLoopBackOff",
                 "CreateContainerConfigError", "InvalidImageName"}


def _ready(pod: client.V1Pod) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in (pod.status.conditions or []))


def _node_ready(node: client.V1Node) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in (node.status.conditions or []))


def _created(pod: client.V1Pod) -> float:
    ts = pod.metadata.creation_timestamp
    if isinstance(ts, datetime):
        return ts.replace(tzinfo=ts.tzinfo or timezone.utc).timestamp()
    return 0.0


class KubeCluster(Cluster):
    backend = "k3s"

    def __init__(self, state: TestbedState, state_dir: Path, api: client.ApiClient, power: NodePower,
                 node_ready_timeout: float = 300):
        self.state, self.state_dir, self.api, self.power = state, state_dir, api, power
        data = state.backend_data
        self.namespace: str = data["namespace"]
        self.image: str = data["image"]
        self.gateway_node_port: int = data["gateway_node_port"]
        self.drain_seconds: int = data.get("drain_seconds", 10)
        self.node_ready_timeout = node_ready_timeout
        self.core, self.apps = client.CoreV1Api(api), client.AppsV1Api(api)
        self._lock = threading.RLock()  # scale read-modify-writes and bindings, across threads
        self._killed: dict[str, Pod] = {}
        self._node_cache: tuple[float, dict[str, bool]] = (0.0, {})

    # ------------------------------------------------------------ nodes
    @property
    def nodes(self) -> list[NodeState]:
        return list(self.state.nodes)

    def _failed(self) -> list[str]:
        return list(self.state.backend_data.get("failed_nodes", []))

    def _set_failed(self, names: list[str]) -> None:
        self.state.backend_data["failed_nodes"] = sorted(set(names))
        save_state(self.state_dir, self.state)

    def _api_ready(self) -> dict[str, bool]:
        at, ready = self._node_cache
        if time.monotonic() - at > 1.0:  # the live loops ask per pod, every second
            ready = {n.metadata.name: _node_ready(n) for n in self.core.list_node().items}
            self._node_cache = (time.monotonic(), ready)
        return ready

    def node_up(self, name: str) -> bool:
        self.node(name)
        # the harness knows at once that it stopped a node; the API learns it only after the
        # node-monitor grace period (40 s)
        return name not in self._failed() and self._api_ready().get(name, False)

    def fail_node(self, name: str) -> list[Pod]:
        self.node(name)
        with self._lock:
            lost = [p for p in self.pods() if p.node == name]
            for pod in lost:
                self._label(pod.name, serving=False)
            self.power.stop(name)
            self._set_failed(self._failed() + [name])
            # A stopped node cannot confirm its pods' deaths: without a force delete they stay
            # "Terminating" until it returns, and their ReplicaSets would not replace them.
            for pod in self._pods_raw():
                if pod.spec.node_name == name and pod.metadata.deletion_timestamp is None:
                    self._delete(pod.metadata.name, grace=0)
            for pod in lost:
                self._killed.pop(pod.name, None)
        return lost

    def recover_node(self, name: str) -> None:
        self.node(name)
        self.power.start(name)
        deadline = time.monotonic() + self.node_ready_timeout
        while True:
            self._node_cache = (0.0, {})
            if self._api_ready().get(name):
                break
            if time.monotonic() > deadline:
                raise TestbedError(f"node {name} did not become Ready within {self.node_ready_timeout:.0f}s after start")
            time.sleep(1)
        self._set_failed([n for n in self._failed() if n != name])

    # ------------------------------------------------------------ latency
    def rtt_configured(self) -> dict[str, dict[str, float]]:
        return {a: dict(row) for a, row in self.state.rtt_configured_ms.items()}

    def set_latency(self, a: str, b: str, rtt_ms: float) -> None:
        from harness.testbed.kube.provision import apply_latency  # playbook plumbing lives there

        if rtt_ms < 0:
            raise ValueError("rtt_ms must be ≥ 0")
        self.node(a), self.node(b)
        if a == b:
            raise ValueError("set_latency needs two different nodes")
        matrix = self.rtt_configured()
        matrix[a][b] = matrix[b][a] = float(rtt_ms)
        apply_latency(self.state, self.state_dir, matrix)
        self.state.rtt_configured_ms = matrix
        save_state(self.state_dir, self.state)

    def measure_rtt(self) -> dict[str, dict[str, float | None]]:
        from harness.testbed.kube.provision import measure_rtt

        up = [n.name for n in self.nodes if self.node_up(n.name)]
        return measure_rtt(self.state, self.state_dir, up)

    # ------------------------------------------------------------ processes
    def start_process(self, node: str, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
                      log: Path | None = None, cgroup: str | None = None) -> PopenProcess:
        """On K3s the harness itself runs on the client node (docs/real-testbed.md): a process for
        a client-tier node runs here; other nodes run only pods."""
        if self.node(node).role != "client":
            raise TestbedError(f"on K3s only the client node runs processes besides pods; {node} is "
                               f"{self.node(node).tier} (run the harness on the client node)")
        out = open(log, "ab") if log else subprocess.DEVNULL
        try:
            popen = subprocess.Popen(list(argv), env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL,
                                     stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        finally:
            if log:
                out.close()
        return PopenProcess(node, popen)

    def run_in_node(self, node: str, argv: Sequence[str], timeout: float = 60) -> subprocess.CompletedProcess:
        """As start_process: only the client node (where the harness runs) runs commands."""
        if self.node(node).role != "client":
            raise TestbedError(f"on K3s only the client node runs commands besides pods; {node} is {self.node(node).tier}")
        try:
            return subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise TestbedError(f"{' '.join(argv)} on {node} did not finish within {timeout:g}s") from None

    # ------------------------------------------------------------ app
    @property
    def endpoints_file(self) -> Path:
        return self.state_dir / "run" / "endpoints.json"

    def set_app(self, app: App) -> None:
        self._free_gateway_port(f"{app.gateway}-nodeport")
        objs = manifests.app_objects(app, self.namespace, self.image, gateway_node_port=self.gateway_node_port,
                                     drain_seconds=self.drain_seconds,
                                     image_pull_policy=self.state.backend_data.get("image_pull_policy", "Never"))
        apply_all(self.api, objs)

    def _free_gateway_port(self, keep: str) -> None:
        """The NodePort of an earlier app's gateway (profiling makes each service a gateway in
        turn): Kubernetes allocates a port to one Service only and refuses a second one."""
        for svc in self.core.list_namespaced_service(self.namespace).items:
            ports = [p.node_port for p in (svc.spec.ports or [])]
            if svc.metadata.name != keep and self.gateway_node_port in ports:
                self.core.delete_namespaced_service(svc.metadata.name, self.namespace)

    def app(self) -> App | None:
        try:
            cm = self.core.read_namespaced_config_map("harness-app", self.namespace)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise
        return parse_app(json.loads(cm.data["app.json"]), f"configmap {self.namespace}/harness-app")

    # ------------------------------------------------------------ pods
    def _pods_raw(self) -> list[client.V1Pod]:
        return self.core.list_namespaced_pod(self.namespace, label_selector=SERVING).items

    def _as_pod(self, p: client.V1Pod) -> Pod:
        return Pod(name=p.metadata.name, service=p.metadata.labels["app"], node=p.spec.node_name,
                   address=p.status.pod_ip or "", port=CELL_PORT)

    def pods_and_leaving(self) -> tuple[list[Pod], list[Pod]]:
        """The bound pods still running, from one list call: those that serve (and the killed ones,
        which stay listed until replaced) and those retired or terminating."""
        serving, going = [], []
        for p in sorted(self._pods_raw(), key=lambda p: (_created(p), p.metadata.name)):
            if not p.spec.node_name or p.status.phase in ("Succeeded", "Failed") or p.metadata.name in self._killed:
                continue
            out = p.metadata.deletion_timestamp is not None or (p.metadata.annotations or {}).get(RETIRED) == "true"
            (going if out else serving).append(self._as_pod(p))
        return serving + list(self._killed.values()), going

    def _scale(self, service: str, delta: int) -> int:
        scale = self.apps.read_namespaced_deployment_scale(service, self.namespace)
        replicas = max(0, (scale.spec.replicas or 0) + delta)
        self.apps.patch_namespaced_deployment_scale(service, self.namespace, {"spec": {"replicas": replicas}})
        return replicas

    def _unbound(self, service: str) -> list[client.V1Pod]:
        pods = [p for p in self._pods_raw() if p.metadata.labels.get("app") == service
                and not p.spec.node_name and p.metadata.deletion_timestamp is None]
        return sorted(pods, key=lambda p: (_created(p), p.metadata.name))

    def unbound_counts(self) -> dict[str, int]:
        """Pods per service that a ReplicaSet created and nobody has bound yet."""
        out: dict[str, int] = {}
        for p in self._pods_raw():
            if not p.spec.node_name and p.metadata.deletion_timestamp is None:
                out[p.metadata.labels["app"]] = out.get(p.metadata.labels["app"], 0) + 1
        return out

    def _bind(self, pod: str, node: str) -> None:
        body = client.V1Binding(metadata=client.V1ObjectMeta(name=pod),
                                target=client.V1ObjectReference(api_version="v1", kind="Node", name=node))
        # The API answers a Binding with a Status, which the client cannot deserialise as the
        # V1Binding it expects ("Invalid value for `target`, must not be `None`",
        # kubernetes-client/python#825): take the raw response instead.
        self.core.create_namespaced_pod_binding(pod, self.namespace, body, _preload_content=False)

    def start_pod(self, service: str, node: str) -> Pod:
        app = self.app()
        if app is None or service not in app.services:
            raise TestbedError(f"no app with service {service!r} is set; deploy the app first")
        if not self.node_up(node):
            raise TestbedError(f"node {node} is down")
        self.check_binding(app, service, node)
        with self._lock:
            waiting = self._unbound(service)
            if not waiting:
                self._scale(service, +1)
                deadline = time.monotonic() + 15
                while not (waiting := self._unbound(service)):
                    if time.monotonic() > deadline:
                        raise TestbedError(f"the ReplicaSet of {service} created no pod within 15 s of scaling up")
                    time.sleep(0.05)
            pod = waiting[0]
            self._bind(pod.metadata.name, node)
            return Pod(name=pod.metadata.name, service=service, node=node, address="", port=CELL_PORT)

    def wait_ready(self, pod: Pod, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            if pod.node in self._failed():  # a node the harness stopped: the pod will not get ready there
                raise TestbedError(f"pod {pod.name}: its node {pod.node} is down")
            try:
                p = self.core.read_namespaced_pod(pod.name, self.namespace)
            except ApiException as exc:
                if exc.status == 404:
                    raise TestbedError(f"pod {pod.name} on {pod.node} was deleted before it got ready") from None
                raise
            if _ready(p):
                return
            if p.status.phase in ("Failed", "Succeeded"):
                raise TestbedError(f"pod {pod.name} on {pod.node} ended ({p.status.phase}): {p.status.message or ''}")
            for cs in p.status.container_statuses or []:
                waiting = cs.state.waiting if cs.state else None
                if waiting and waiting.reason in FATAL_WAITING:
                    raise TestbedError(f"pod {pod.name} on {pod.node}: {waiting.reason}: {waiting.message or ''}")
            if time.monotonic() > deadline:
                raise TestbedError(f"pod {pod.name} on {pod.node} not ready after {timeout:.0f}s (phase {p.status.phase})")
            time.sleep(0.1)

    def _label(self, name: str, serving: bool | None = None, retired: bool = False, cost: int | None = None) -> None:
        meta: dict = {}
        if serving is not None:
            meta["labels"] = {SERVING: "true" if serving else "false"}
        annotations = {}
        if retired:
            annotations[RETIRED] = "true"
        if cost is not None:
            annotations[DELETION_COST] = str(cost)
        if annotations:
            meta["annotations"] = annotations
        try:
            self.core.patch_namespaced_pod(name, self.namespace, {"metadata": meta})
        except ApiException as exc:
            if exc.status != 404:  # gone already: nothing to label
                raise

    def _delete(self, name: str, grace: int) -> None:
        try:
            self.core.delete_namespaced_pod(name, self.namespace, grace_period_seconds=grace)
        except ApiException as exc:
            if exc.status != 404:
                raise

    def retire_pod(self, pod: Pod) -> None:
        self._label(pod.name, serving=False, retired=True)

    def stop_pod(self, pod: Pod, drain_seconds: float = 10) -> None:
        with self._lock:
            if self._killed.pop(pod.name, None) is not None:
                self._scale(pod.service, -1)  # the ReplicaSet's unbound replacement goes first
                return
            try:
                marks = self.core.read_namespaced_pod(pod.name, self.namespace).metadata.annotations or {}
            except ApiException as exc:
                if exc.status != 404:
                    raise
                marks = {}  # gone (a failed node's force delete): its replacement, if any, is scaled away
            if marks.get(DELETION_COST) == STOPPED_COST:
                return  # stopped already (undeploy after a move's stop): a second scale-down takes another replica
            self._label(pod.name, serving=False, retired=True, cost=int(STOPPED_COST))
            self._scale(pod.service, -1)
            if drain_seconds <= 0:
                self._delete(pod.name, grace=0)
                return
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                try:
                    p = self.core.read_namespaced_pod(pod.name, self.namespace)
                except ApiException as exc:
                    if exc.status == 404:
                        return
                    raise
                if p.metadata.deletion_timestamp is not None:
                    return  # terminating: SIGTERM sent, it drains for its grace period
                time.sleep(0.05)
            # The controller chose another pod (or none): delete ours; the count stays right,
            # since a pod it deleted instead is replaced by an unbound one.
            self._delete(pod.name, grace=int(drain_seconds) + 2)

    def pod_alive(self, pod: Pod) -> bool:
        if pod.name in self._killed:
            return False
        try:
            p = self.core.read_namespaced_pod(pod.name, self.namespace)
        except ApiException as exc:
            if exc.status == 404:
                return False
            raise
        if p.metadata.deletion_timestamp is not None or p.status.phase not in ("Pending", "Running"):
            return False
        return not any(cs.state and cs.state.terminated for cs in (p.status.container_statuses or []))

    def kill_pod(self, pod: Pod) -> None:
        with self._lock:
            self._delete(pod.name, grace=0)
            self._killed[pod.name] = pod

    def publish(self) -> None:
        with self._lock:
            raw = {p.metadata.name: p for p in self._pods_raw()}
            serving: dict[str, set[str]] = {}
            for pod in self.pods():
                if pod.name in self._killed:
                    continue
                labels = raw[pod.name].metadata.labels if pod.name in raw else {}
                if (labels or {}).get(SERVING) != "true":
                    self._label(pod.name, serving=True)
                serving.setdefault(pod.service, set()).add(pod.node)
            self._write_endpoints(serving)

    def _write_endpoints(self, serving: dict[str, set[str]]) -> None:
        """What the load generator (here, outside the cluster) reads: the gateway as each node
        with a serving gateway pod, on the NodePort; every other service as its Service's name."""
        app = self.app()
        if app is None:
            return
        table = {}
        for service in app.services:
            if service == app.gateway:
                table[service] = [f"{self.node(n).address}:{self.gateway_node_port}" for n in sorted(serving.get(service, ()))]
            else:
                table[service] = [manifests.service_address(service, self.namespace)]
        self.endpoints_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.endpoints_file.with_name("endpoints.json.tmp")
        tmp.write_text(json.dumps(table, indent=1))
        os.replace(tmp, self.endpoints_file)
