"""A Kubernetes cluster harness did not build, used as it is: ``--kubeconfig FILE --context NAME``.

Nothing is provisioned. The first command given a kubeconfig *attaches*: it reads the nodes
through the API, maps their labels to harness's node types, sites and tiers (``ClusterMap``),
measures the RTT between every pair of nodes with one short pod per node (TCP handshakes to the
peers' kubelet port, ``harness.testbed.rtt_probe``) and from this machine to each node, deploys
harness's Prometheus, and records all of it as the testbed state. From then on every command
uses the cluster as it uses a K3s testbed (``KubeCluster``), with three differences:

- the machine harness runs on is the client node (``here``): the load starts here and reaches
  the gateway through its NodePort;
- a node failure is emulated, not real: the node is cordoned and tainted
  ``harness.io/failed:NoExecute`` and harness's pods on it are deleted; recovery removes both;
- latency is the cluster's own: there is no injector, so latency faults are refused.

``harness teardown`` removes what harness made (its namespace, when it created it, and its
cluster-wide Prometheus role) and uncordons any node it marked; it never touches anything else.
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import time
from pathlib import Path

from kubernetes import client
from kubernetes.client.rest import ApiException
from kubernetes.utils import parse_quantity

from harness.errors import TestbedError, UserError
from harness.spec.cluster_map import ClusterMap
from harness.spec.inventory import ROLES, Inventory, check_semantics
from harness.spec.testbed_state import NodeState, TestbedState, load_state, now_iso, save_state, state_path
from harness.testbed import rtt_probe
from harness.testbed.kube import manifests
from harness.testbed.kube.apply import apply_all
from harness.testbed.kube.backend import KubeCluster
from harness.testbed.kube.connect import kubeconfig_client

BACKEND = "existing"
CLIENT = "here"  # the machine harness runs on: the load's source, not a node of the cluster
FAILED_TAINT = {"key": "harness.io/failed", "value": "true", "effect": "NoExecute"}
PROBE_LABEL = "harness.io/probe"
PROBE_TIMEOUT_S = 180  # a first pull of the cell image included


def api_client(kubeconfig: str | None, context: str | None) -> client.ApiClient:
    """The client kubectl would use: the file (else $KUBECONFIG, else ~/.kube/config), the context
    (else the file's current one), every call under a request timeout (``connect``); a missing or
    malformed file, an unknown context, a server that cannot be reached or does not answer: one line."""
    path = kubeconfig or os.environ.get("KUBECONFIG", "").split(os.pathsep)[0] or str(Path.home() / ".kube/config")
    return kubeconfig_client(path, context)


# ---------------------------------------------------------------- nodes and their labels
def _schedulable(node: client.V1Node, failed: set[str]) -> bool:
    if node.metadata.name in failed:  # cordoned by harness itself: still the testbed's
        return True
    if node.spec.unschedulable:
        return False
    return not any(t.effect == "NoSchedule" and t.key.startswith("node-role.kubernetes.io/")
                   for t in (node.spec.taints or []))


def _address(node: client.V1Node) -> str:
    addresses = {a.type: a.address for a in (node.status.addresses or [])}
    return addresses.get("InternalIP") or addresses.get("ExternalIP") or addresses.get("Hostname") or ""


def _here_address(peer: str) -> str:
    """This machine's address towards the cluster (a UDP connect sends nothing)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect((peer, 9))
            return s.getsockname()[0]
    except OSError:
        return "127.0.0.1"


def read_nodes(core: client.CoreV1Api, cmap: ClusterMap, source: str, failed: set[str] = frozenset()) -> list[NodeState]:
    """The cluster's schedulable nodes as harness's nodes (control-plane and cordoned ones left
    out), their type, site and tier from their labels, capacity from what the scheduler sees."""
    nodes = [n for n in core.list_node(label_selector=cmap.node_selector or None).items if _schedulable(n, failed)]
    if not nodes:
        raise UserError("no schedulable node" + (f" matches {cmap.node_selector!r}" if cmap.node_selector else ""),
                        source=source, field="node_selector")
    out = []
    for n in sorted(nodes, key=lambda n: n.metadata.name):
        labels = n.metadata.labels or {}
        alloc = n.status.allocatable or {}
        cpus = float(parse_quantity(alloc.get("cpu", "0")))
        memory_gb = float(parse_quantity(alloc.get("memory", "0"))) / 2 ** 30
        node_type = labels.get(cmap.labels.type) or f"{cpus:g}cpu-{memory_gb:.0f}gib"
        site = labels.get(cmap.labels.site)
        tier = cmap.tier_of(labels, site, node_type)
        role = tier if tier in ROLES else (cmap.tier_roles[tier].role if tier in cmap.tier_roles else None)
        if role is None:
            raise UserError(f"node {n.metadata.name} is in tier {tier!r}, which has no role; add "
                            f"'tier_roles: {{{tier}: {{role: edge}}}}' (roles: {', '.join(ROLES)})", source=source,
                            field="tier_roles")
        facts = cmap.node_types.get(node_type)
        out.append(NodeState(name=n.metadata.name, type=node_type, tier=tier, role=role, site=site, address=_address(n),
                             cpus=cpus, memory_gb=round(memory_gb, 3), speed=facts.speed if facts else 1.0,
                             cost=facts.cost if facts else 0.0, gpus=int(parse_quantity(alloc.get("nvidia.com/gpu", "0")))))
    return out


def client_node(nodes: list[NodeState]) -> NodeState:
    return NodeState(name=CLIENT, type=CLIENT, tier="client", role="client", address=_here_address(nodes[0].address),
                     cpus=float(os.cpu_count() or 1), memory_gb=1.0, speed=1.0)


def inventory_of(name: str, nodes: list[NodeState], cmap: ClusterMap, rtt: dict[str, dict[str, float | None]],
                 source: str) -> Inventory:
    """An inventory that describes the cluster as found: one type per type label (the smallest
    capacity of its nodes), the tiers' RTTs the medians of the measured pairs (0 where none was)."""
    types: dict[str, dict] = {}
    for n in nodes:
        t = types.setdefault(n.type, {"tier": n.tier, "cpus": n.cpus, "memory_gb": n.memory_gb, "speed": n.speed,
                                      "cost": n.cost, "gpus": n.gpus})
        t["cpus"], t["memory_gb"] = min(t["cpus"], n.cpus), min(t["memory_gb"], n.memory_gb)
    pairs: dict[str, list[float]] = {}
    for i, a in enumerate(nodes):
        for b in nodes[i + 1:]:
            key = "-".join(sorted((a.tier, b.tier)))
            values = [v for v in (rtt.get(a.name, {}).get(b.name), rtt.get(b.name, {}).get(a.name)) if v is not None]
            pairs.setdefault(key, []).extend(values)
    doc = {"name": name, "backend": BACKEND, "node_types": types,
           "nodes": [{"name": n.name, "type": n.type, "site": n.site} for n in nodes],
           "tiers": {k: v.model_dump() for k, v in cmap.tier_roles.items()},
           "rtt_ms": {k: round(statistics.median(v), 3) if v else 0.0 for k, v in pairs.items()}}
    return check_semantics(Inventory.model_validate(doc), source)


# ---------------------------------------------------------------- RTTs, measured from inside
def _probe_pod(name: str, node: NodeState, peers: list[NodeState], cmap: ClusterMap, namespace: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": {PROBE_LABEL: "rtt",
                                                                          "app.kubernetes.io/part-of": "harness"}},
            "spec": {"nodeName": node.name, "hostNetwork": True, "restartPolicy": "Never",
                     "tolerations": [{"operator": "Exists"}],
                     "containers": [{"name": "probe", "image": cmap.image, "imagePullPolicy": cmap.image_pull_policy,
                                     "command": ["python", "-m", "harness.testbed.rtt_probe", "--from", node.name,
                                                 "--port", str(cmap.rtt_port)]
                                     + [f"{p.name}={p.address}" for p in peers if p.name != node.name]}]}}


def measure_rtt(core: client.CoreV1Api, nodes: list[NodeState], cmap: ClusterMap, namespace: str,
                timeout_s: float = PROBE_TIMEOUT_S) -> dict[str, dict[str, float | None]]:
    """Node to node from one pod per node (hostNetwork: the nodes' own path), and between this
    machine and each node from here; a pair nobody could measure is None (unreachable)."""
    cluster_nodes = [n for n in nodes if n.name != CLIENT]
    names = {n.name: f"harness-rtt-{i}" for i, n in enumerate(cluster_nodes)}
    for pod in core.list_namespaced_pod(namespace, label_selector=PROBE_LABEL).items:  # a run cut short
        core.delete_namespaced_pod(pod.metadata.name, namespace, grace_period_seconds=0)
    rows: dict[str, dict[str, float | None]] = {}
    try:
        for n in cluster_nodes:
            core.create_namespaced_pod(namespace, _probe_pod(names[n.name], n, cluster_nodes, cmap, namespace))
        deadline = time.monotonic() + timeout_s
        pending = dict(names)
        while pending and time.monotonic() < deadline:
            for node, pod in list(pending.items()):
                p = core.read_namespaced_pod(pod, namespace)
                if p.status.phase in ("Succeeded", "Failed"):
                    del pending[node]
                    if p.status.phase == "Succeeded":
                        lines = core.read_namespaced_pod_log(pod, namespace).strip().splitlines()
                        rows[node] = json.loads(lines[-1])["rtt_ms"] if lines else {}
            time.sleep(0.2)
    finally:
        for pod in names.values():
            try:
                core.delete_namespaced_pod(pod, namespace, grace_period_seconds=0)
            except ApiException as exc:
                if exc.status != 404:
                    raise
    here = rtt_probe.measure({n.name: n.address for n in cluster_nodes}, cmap.rtt_port)
    all_names = [n.name for n in nodes]
    matrix: dict[str, dict[str, float | None]] = {}
    for a in all_names:
        matrix[a] = {}
        for b in all_names:
            if a == b:
                matrix[a][b] = 0.0
            elif CLIENT in (a, b):
                matrix[a][b] = here.get(b if a == CLIENT else a)
            else:
                matrix[a][b] = rows.get(a, {}).get(b)
    return matrix


# ---------------------------------------------------------------- attach, open, teardown
def _identity(kubeconfig: str | None, context: str | None, cmap: ClusterMap) -> dict:
    return {"kubeconfig": str(Path(kubeconfig).expanduser().resolve()) if kubeconfig else None, "context": context,
            "cluster_map": cmap.model_dump(mode="json")}


def attach(state_dir: Path, kubeconfig: str | None, context: str | None, cmap: ClusterMap, source: str,
           on_step=lambda text: None) -> TestbedState:
    """The cluster as a testbed state (see the module's docstring); attached already to the same
    cluster with the same map: the recorded state, unchanged."""
    wanted = _identity(kubeconfig, context, cmap)
    existing = load_state(state_dir)
    if existing is not None:
        if existing.backend == BACKEND and existing.backend_data.get("identity") == wanted and existing.status == "ready":
            return existing
        raise UserError(f"a testbed '{existing.name}' ({existing.backend}) is recorded here; run 'harness teardown' "
                        "first, or give another --state-dir", source=str(state_path(state_dir)))
    api = api_client(kubeconfig, context)
    core = client.CoreV1Api(api)
    on_step("reading the nodes")
    try:
        nodes = read_nodes(core, cmap, source)
        created = _ensure_namespace(core, cmap.namespace)
    except ApiException as exc:
        raise TestbedError(f"the API server refused: {exc.status} {exc.reason}") from None
    nodes.append(client_node(nodes))
    state = TestbedState(backend=BACKEND, name=cmap.name, status="provisioning", inventory_checksum="", inventory={},
                         created=now_iso(), nodes=nodes, latency_injector=None,
                         latency_injector_reason="none: the cluster's own network (harness did not build it)",
                         backend_data={"identity": wanted, "kubeconfig": wanted["kubeconfig"], "context": context,
                                       "namespace": cmap.namespace, "namespace_created": created, "image": cmap.image,
                                       "image_pull_policy": cmap.image_pull_policy,
                                       "gateway_node_port": cmap.gateway_node_port, "failed_nodes": [],
                                       "local_nodes": [CLIENT]})
    save_state(state_dir, state)  # before anything is made: teardown finds the namespace
    on_step(f"measuring RTTs between {len(nodes)} nodes")
    state.rtt_measured_ms = measure_rtt(core, nodes, cmap, cmap.namespace)
    inv = inventory_of(cmap.name, nodes, cmap, state.rtt_measured_ms, source)
    state.inventory, state.inventory_checksum = inv.model_dump(mode="json"), inv.checksum()
    state.rtt_configured_ms = inv.rtt_matrix()
    if cmap.prometheus_node_port is not None:
        on_step("deploying Prometheus")
        apply_all(api, manifests.prometheus_objects(cmap.namespace, cmap.prometheus_node_port))
        gateway = next(n for n in nodes if n.role != "client")
        state.prometheus_url = f"http://{gateway.address}:{cmap.prometheus_node_port}"
    state.status = "ready"
    save_state(state_dir, state)
    api.close()
    return state


def _ensure_namespace(core: client.CoreV1Api, namespace: str) -> bool:
    try:
        core.read_namespace(namespace)
        return False
    except ApiException as exc:
        if exc.status != 404:
            raise
    core.create_namespace({"metadata": {"name": namespace, "labels": {"app.kubernetes.io/part-of": "harness"}}})
    return True


class CordonNodePower:
    """A node 'failure' on a cluster harness may not switch off: cordoned and tainted NoExecute
    (every pod without a toleration leaves it); 'start' undoes both."""

    def __init__(self, core: client.CoreV1Api):
        self.core = core

    def stop(self, node: str) -> None:
        taints = [t.to_dict() for t in (self.core.read_node(node).spec.taints or []) if t.key != FAILED_TAINT["key"]]
        self.core.patch_node(node, {"spec": {"unschedulable": True, "taints": taints + [FAILED_TAINT]}})

    def start(self, node: str) -> None:
        taints = [{k: v for k, v in t.to_dict().items() if v is not None}
                  for t in (self.core.read_node(node).spec.taints or []) if t.key != FAILED_TAINT["key"]]
        self.core.patch_node(node, {"spec": {"unschedulable": None, "taints": taints or None}})


class ExistingCluster(KubeCluster):
    backend = BACKEND

    def node_up(self, name: str) -> bool:
        if name in self.state.backend_data.get("local_nodes", []):
            self.node(name)
            return True
        return super().node_up(name)

    def set_latency(self, a: str, b: str, rtt_ms: float) -> None:
        raise TestbedError("this cluster's latency is its own (harness did not build it): latency faults need a "
                           "testbed harness provisioned")

    def measure_rtt(self) -> dict[str, dict[str, float | None]]:
        cmap = ClusterMap.model_validate(self.state.backend_data["identity"]["cluster_map"])
        up = [n for n in self.nodes if self.node_up(n.name)]
        return measure_rtt(self.core, up, cmap, self.namespace)


def open_existing(state: TestbedState, state_dir: Path) -> ExistingCluster:
    api = api_client(state.data("kubeconfig", state_dir), state.backend_data.get("context"))
    return ExistingCluster(state, state_dir, api, CordonNodePower(client.CoreV1Api(api)))


def provision(inv, state_dir, on_progress=None, measure=True):
    raise UserError("a cluster of yours is not provisioned: give any command --kubeconfig FILE [--context NAME] "
                    "(docs/own-cluster.md)", field="backend")


def teardown_testbed(state: TestbedState | None, inventory, state_dir: Path) -> str:
    """Harness's namespace (when harness created it), its Prometheus role, the marks on failed
    nodes; nothing else of the cluster."""
    if state is None:
        return "nothing to remove (no state file)"
    api = api_client(state.backend_data.get("kubeconfig"), state.backend_data.get("context"))
    core, rbac = client.CoreV1Api(api), client.RbacAuthorizationV1Api(api)
    done = []
    for node in state.backend_data.get("failed_nodes", []):
        CordonNodePower(core).start(node)
        done.append(f"uncordoned {node}")
    namespace = state.backend_data.get("namespace", "harness")
    for kind, delete in (("namespace", lambda: core.delete_namespace(namespace) if state.backend_data.get(
            "namespace_created") else None),
                         ("Prometheus's cluster role", lambda: rbac.delete_cluster_role(f"harness-prometheus-{namespace}")),
                         ("its binding", lambda: rbac.delete_cluster_role_binding(f"harness-prometheus-{namespace}"))):
        try:
            if delete() is not None:
                done.append(f"deleted {kind}" + (f" {namespace}" if kind == "namespace" else ""))
        except ApiException as exc:
            if exc.status != 404:
                raise
    if not state.backend_data.get("namespace_created"):
        for dep in client.AppsV1Api(api).list_namespaced_deployment(namespace, label_selector="app.kubernetes.io/part-of=harness").items:
            client.AppsV1Api(api).delete_namespaced_deployment(dep.metadata.name, namespace)
        done.append(f"deleted harness's deployments in {namespace} (the namespace was there before)")
    state_path(state_dir).unlink(missing_ok=True)
    api.close()
    return f"detached from '{state.name}': " + ("; ".join(done) or "nothing of harness's was left")
