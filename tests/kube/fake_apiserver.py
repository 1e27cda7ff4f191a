"""A FAKE Kubernetes API server: only the endpoints the K3s backend uses, with Kubernetes'
semantics where the backend depends on them. Nothing real can run a Kubernetes API server on
this machine (no K3s, no kind), so the backend's contract tests run against this, and the same
tests run against the real local backend.

What it implements, and how it follows Kubernetes:
- nodes (list), with a Ready condition the test flips through /fake/nodes/<name>/stop|start
  (what node-power.yml does on a real cluster);
- namespaces, ConfigMaps, Services, Deployments: create (409 when they exist), get, merge
  patch, delete; the Deployment's ``scale`` subresource;
- a ReplicaSet controller: keeps each Deployment at ``spec.replicas`` pods from its template
  (unbound: nodeName empty); scaling down deletes pods in Kubernetes' order (unassigned, then
  Pending, then not Ready, then lower ``controller.kubernetes.io/pod-deletion-cost``, then newer);
- the Binding subresource: sets nodeName once (409 if bound), answers with a Status object —
  which the official client cannot deserialise as a V1Binding (kubernetes-client/python#825);
- a kubelet: a pod bound to a Ready node runs and gets Ready after ``ready_delay``; a graceful
  delete sets deletionTimestamp and removes the pod after ``shutdown_delay`` (the fake
  container exits at once on SIGTERM); grace 0 removes it at once; pods on a stopped node stay
  as they are until deleted, as on a real cluster where nobody can confirm their death.
- label selectors: ``k``, ``k=v``, ``k==v``, ``k!=v``, comma-separated;
- nodes given as whole Node objects (labels as a cloud provider sets them, allocatable as the
  kubelet reports it), read and patched (cordon, taints);
- pods created directly; with ``run_env`` given, every bound pod's command runs as a real local
  process, Services and NodePorts forward to Ready pods, and ``pods/<name>/log`` is the process's
  output (``tests/kube/fake_kubelet.py``); without it, containers are pretend ones;
- ServiceAccounts, ClusterRoles and ClusterRoleBindings, stored.
It is not a general API server: no watches, resourceVersion checks, field selectors or RBAC.
"""

from __future__ import annotations

import copy
import itertools
import json
import re
import secrets
import threading
import time
import urllib.request
from contextlib import contextmanager
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def merge_patch(target, patch):
    """RFC 7386 JSON merge patch (what the backend's strategic-merge patches amount to here)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def matches(labels: dict, selector: str | None) -> bool:
    for term in filter(None, (selector or "").split(",")):
        if "!=" in term:
            k, v = term.split("!=", 1)
            if labels.get(k) == v:
                return False
        elif "=" in term:
            k, v = re.split("==?", term, maxsplit=1)
            if labels.get(k) != v:
                return False
        elif term not in labels:
            return False
    return True


class ApiError(Exception):
    def __init__(self, code: int, reason: str, message: str):
        self.code, self.reason, self.message = code, reason, message


class FakeCluster:
    """The objects and the controllers' logic, apart from HTTP."""

    def __init__(self, nodes: list[dict], ready_delay: float = 0.2, shutdown_delay: float = 0.2,
                 run_env: dict | None = None):
        self.lock = threading.RLock()
        from tests.kube.fake_kubelet import FakeKubelet

        self.kubelet = FakeKubelet(self, run_env) if run_env is not None else None
        self.ready_delay, self.shutdown_delay = ready_delay, shutdown_delay
        self.objects: dict[tuple[str, str, str], dict] = {}  # (resource, namespace, name) -> object
        self.ips = itertools.count(2)
        self.bindings = 0
        for n in nodes:
            if "metadata" in n:  # a whole Node object
                node = copy.deepcopy(n)
                node.setdefault("spec", {})
                node.setdefault("status", {}).setdefault("conditions", [{"type": "Ready", "status": "True"}])
                self.objects[("nodes", "", node["metadata"]["name"])] = self._meta(node, "")
                continue
            self.objects[("nodes", "", n["name"])] = {
                "apiVersion": "v1", "kind": "Node",
                "metadata": {"name": n["name"], "labels": {"harness.io/type": n["type"], "harness.io/tier": n["tier"]},
                             "creationTimestamp": _now()},
                "status": {"conditions": [{"type": "Ready", "status": "True"}],
                           "addresses": [{"type": "InternalIP", "address": n["address"]}],
                           "allocatable": {"cpu": str(n["cpus"]), "memory": f"{int(n['memory_gb'] * 1024)}Mi"}},
            }

    # ---------------------------------------------------------- generic objects
    def _meta(self, obj: dict, namespace: str) -> dict:
        meta = obj.setdefault("metadata", {})
        if namespace:
            meta["namespace"] = namespace
        meta.setdefault("uid", secrets.token_hex(8))
        meta.setdefault("creationTimestamp", _now())
        meta["resourceVersion"] = str(time.monotonic_ns())
        return obj

    def create(self, resource: str, namespace: str, obj: dict) -> dict:
        with self.lock:
            name = obj["metadata"].get("name")
            if not name:
                raise ApiError(422, "Invalid", "metadata.name: Required value")
            if namespace and ("namespaces", "", namespace) not in self.objects:
                raise ApiError(404, "NotFound", f'namespaces "{namespace}" not found')
            key = (resource, namespace, name)
            if key in self.objects:
                raise ApiError(409, "AlreadyExists", f'{resource} "{name}" already exists')
            if resource == "services":  # a NodePort belongs to one Service in the whole cluster
                taken = {p.get("nodePort") for s in self.list("services", "", None) for p in s["spec"].get("ports", [])}
                for p in obj.get("spec", {}).get("ports", []):
                    if p.get("nodePort") and p["nodePort"] in taken:
                        raise ApiError(422, "Invalid", f'Service "{name}" is invalid: spec.ports[0].nodePort: Invalid '
                                       f'value: {p["nodePort"]}: provided port is already allocated')
            self.objects[key] = self._meta(copy.deepcopy(obj), namespace)
            if resource == "pods":
                pod = self.objects[key]
                pod.setdefault("status", {}).setdefault("phase", "Pending")
                pod.setdefault("_created", time.monotonic_ns())
                if pod["spec"].get("nodeName"):
                    pod["_bound_at"] = time.monotonic()
            return self.objects[key]

    def get(self, resource: str, namespace: str, name: str) -> dict:
        with self.lock:
            try:
                return self.objects[(resource, namespace, name)]
            except KeyError:
                raise ApiError(404, "NotFound", f'{resource} "{name}" not found') from None

    def list(self, resource: str, namespace: str, selector: str | None) -> list[dict]:
        with self.lock:
            return [o for (r, ns, _), o in sorted(self.objects.items())
                    if r == resource and (not namespace or ns == namespace)
                    and matches(o["metadata"].get("labels") or {}, selector)]

    def patch(self, resource: str, namespace: str, name: str, patch: dict) -> dict:
        with self.lock:
            obj = self.get(resource, namespace, name)
            merged = merge_patch(obj, patch)
            merged["metadata"]["name"], merged["metadata"]["uid"] = name, obj["metadata"]["uid"]
            self.objects[(resource, namespace, name)] = self._meta(merged, namespace)
            return merged

    def delete(self, resource: str, namespace: str, name: str, grace: int | None = None) -> dict:
        with self.lock:
            obj = self.get(resource, namespace, name)
            if resource == "pods":
                return self.delete_pod(obj, grace)
            del self.objects[(resource, namespace, name)]
            if resource == "namespaces":
                for key in [k for k in self.objects if k[1] == name]:
                    del self.objects[key]
            if resource == "deployments":  # foreground-less cascade: its pods go too
                for pod in self.list("pods", namespace, None):
                    if pod["metadata"].get("ownerDeployment") == name:
                        self.delete_pod(pod, 0)
            return obj

    # ---------------------------------------------------------- pods
    def delete_pod(self, pod: dict, grace: int | None) -> dict:
        if grace is None:
            grace = pod["spec"].get("terminationGracePeriodSeconds", 30)
        key = ("pods", pod["metadata"]["namespace"], pod["metadata"]["name"])
        if grace == 0:
            if self.kubelet is not None:
                self.kubelet.remove(*key[1:])
            self.objects.pop(key, None)
        elif not pod["metadata"].get("deletionTimestamp"):
            pod["metadata"]["deletionTimestamp"] = _now()
            pod["metadata"]["deletionGracePeriodSeconds"] = grace
            pod["_deleting_at"] = time.monotonic()
            if self.kubelet is not None:
                self.kubelet.terminate(*key[1:])
        return pod

    def bind(self, namespace: str, name: str, binding: dict) -> dict:
        with self.lock:
            pod = self.get("pods", namespace, name)
            node = binding.get("target", {}).get("name")
            if pod["spec"].get("nodeName"):
                raise ApiError(409, "Conflict", f'pod {name} is already assigned to node "{pod["spec"]["nodeName"]}"')
            if ("nodes", "", node) not in self.objects:
                raise ApiError(404, "NotFound", f'nodes "{node}" not found')
            pod["spec"]["nodeName"] = node
            pod["_bound_at"] = time.monotonic()
            self.bindings += 1
            return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}

    def node_ready(self, name: str) -> bool:
        node = self.get("nodes", "", name)
        return any(c["type"] == "Ready" and c["status"] == "True" for c in node["status"]["conditions"])

    def set_node_ready(self, name: str, ready: bool) -> None:
        with self.lock:
            self.get("nodes", "", name)["status"]["conditions"] = [{"type": "Ready", "status": "True" if ready else "False"}]
            if not ready and self.kubelet is not None:  # a stopped node's containers die with it
                for pod in self.list("pods", "", None):
                    if pod["spec"].get("nodeName") == name:
                        self.kubelet.remove(pod["metadata"]["namespace"], pod["metadata"]["name"])

    @staticmethod
    def _rank(pod: dict) -> tuple:
        """Kubernetes' order of deletion on scale-down (lowest first)."""
        phase = {"Pending": 0, "Unknown": 1, "Running": 2}.get(pod["status"].get("phase", "Pending"), 0)
        ready = any(c["type"] == "Ready" and c["status"] == "True" for c in pod["status"].get("conditions", []))
        cost = int((pod["metadata"].get("annotations") or {}).get(DELETION_COST, "0"))
        return (bool(pod["spec"].get("nodeName")), phase, ready, cost, -pod["_created"])

    def reconcile(self) -> None:
        with self.lock:
            now = time.monotonic()
            for dep in self.list("deployments", "", None):
                ns, name = dep["metadata"]["namespace"], dep["metadata"]["name"]
                active = [p for p in self.list("pods", ns, None) if p["metadata"].get("ownerDeployment") == name
                          and not p["metadata"].get("deletionTimestamp")]
                want = int(dep["spec"].get("replicas", 1))
                for _ in range(want - len(active)):
                    self._new_pod(dep)
                for pod in sorted(active, key=self._rank)[:max(0, len(active) - want)]:
                    self.delete_pod(pod, None)
                dep["status"] = {"replicas": len(active)}
            for (r, ns, name), pod in list(self.objects.items()):
                if r != "pods":
                    continue
                runs = self.kubelet is not None and self.kubelet.runs(ns, name)
                if pod.get("_deleting_at") is not None:
                    grace = pod["metadata"]["deletionGracePeriodSeconds"]
                    if (runs and (self.kubelet.ended(ns, name) or now - pod["_deleting_at"] >= grace)) or \
                            (not runs and now - pod["_deleting_at"] >= min(self.shutdown_delay, grace)):
                        if runs:
                            self.kubelet.remove(ns, name)
                        del self.objects[(r, ns, name)]
                    continue
                if runs:
                    self.kubelet.observe(ns, name, pod)
                    continue
                node = pod["spec"].get("nodeName")
                if node and pod["status"]["phase"] == "Pending" and self.node_ready(node) \
                        and now - pod["_bound_at"] >= self.ready_delay:
                    if self.kubelet is not None:
                        self.kubelet.start(ns, name, pod)
                        continue
                    n = next(self.ips)
                    pod["status"] = {
                        "phase": "Running", "podIP": f"10.42.{n // 250}.{n % 250 + 2}", "startTime": _now(),
                        "conditions": [{"type": "Ready", "status": "True"}],
                        "containerStatuses": [{"name": c["name"], "ready": True, "restartCount": 0, "image": c["image"],
                                               "imageID": "", "state": {"running": {"startedAt": _now()}}}
                                              for c in pod["spec"]["containers"]]}

    def log(self, ns: str, name: str) -> str:
        self.get("pods", ns, name)
        return self.kubelet.log(ns, name) if self.kubelet is not None else ""

    def _new_pod(self, dep: dict) -> dict:
        ns, name = dep["metadata"]["namespace"], dep["metadata"]["name"]
        template = copy.deepcopy(dep["spec"]["template"])
        meta = template.get("metadata", {})
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": f"{name}-{secrets.token_hex(3)}", "namespace": ns, "labels": meta.get("labels", {}),
                            "annotations": meta.get("annotations", {}), "ownerDeployment": name},
               "spec": template["spec"], "status": {"phase": "Pending"}, "_created": time.monotonic_ns()}
        return self.create("pods", ns, pod)


def public(obj: dict) -> dict:
    """The object as the API shows it: without the fake's bookkeeping."""
    out = {k: v for k, v in obj.items() if not k.startswith("_")}
    if "metadata" in out:
        out["metadata"] = {k: v for k, v in out["metadata"].items() if k != "ownerDeployment"}
    return out


ROUTES = [  # (method, pattern) -> handler name; patterns capture namespace and name
    (r"^/api/v1/nodes(?:/(?P<name>[^/]+))?$", "nodes"),
    (r"^/api/v1/namespaces/(?P<ns>[^/]+)/pods/(?P<name>[^/]+)/log$", "log"),
    (r"^/api/v1/namespaces/(?P<ns>[^/]+)/(?P<res>serviceaccounts)(?:/(?P<name>[^/]+))?$", "namespaced"),
    (r"^/apis/rbac.authorization.k8s.io/v1/(?P<res>clusterroles|clusterrolebindings)(?:/(?P<name>[^/]+))?$",
     "cluster_scoped"),
    (r"^/api/v1/namespaces(?:/(?P<name>[^/]+))?$", "namespaces"),
    (r"^/api/v1/namespaces/(?P<ns>[^/]+)/pods/(?P<name>[^/]+)/binding$", "binding"),
    (r"^/api/v1/namespaces/(?P<ns>[^/]+)/(?P<res>pods|configmaps|services)(?:/(?P<name>[^/]+))?$", "namespaced"),
    (r"^/apis/apps/v1/namespaces/(?P<ns>[^/]+)/deployments/(?P<name>[^/]+)/scale$", "scale"),
    (r"^/apis/apps/v1/namespaces/(?P<ns>[^/]+)/(?P<res>deployments)(?:/(?P<name>[^/]+))?$", "namespaced"),
    (r"^/fake/nodes/(?P<name>[^/]+)/(?P<verb>stop|start)$", "power"),
]
KINDS = {"pods": "Pod", "configmaps": "ConfigMap", "services": "Service", "deployments": "Deployment",
         "namespaces": "Namespace", "nodes": "Node", "serviceaccounts": "ServiceAccount", "clusterroles": "ClusterRole",
         "clusterrolebindings": "ClusterRoleBinding"}


class Handler(BaseHTTPRequestHandler):
    cluster: FakeCluster  # set on the subclass the server makes
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # quiet
        pass

    def _body(self) -> dict:
        n = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(n) or b"{}") if n else {}

    def _send(self, code: int, obj) -> None:
        if isinstance(obj, str):  # a pod's log: text, as the API serves it
            body = obj.encode()
            self.send_response(code)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _dispatch(self, method: str) -> None:
        url = urlparse(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        try:
            for pattern, handler in ROUTES:
                m = re.match(pattern, url.path)
                if m:
                    code, obj = getattr(self, f"_{handler}")(method, query, **m.groupdict())
                    return self._send(code, obj)
            raise ApiError(404, "NotFound", f"the fake API server does not serve {method} {url.path}")
        except ApiError as e:
            self._send(e.code, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                "message": e.message, "reason": e.reason, "code": e.code})

    do_GET = lambda self: self._dispatch("GET")  # noqa: E731
    do_POST = lambda self: self._dispatch("POST")  # noqa: E731
    do_PATCH = lambda self: self._dispatch("PATCH")  # noqa: E731
    do_PUT = lambda self: self._dispatch("PUT")  # noqa: E731
    do_DELETE = lambda self: self._dispatch("DELETE")  # noqa: E731

    # ---------------------------------------------------------- handlers
    def _nodes(self, method, query, name=None):
        if name is not None:
            return self._namespaced(method, query, ns="", res="nodes", name=name)
        items = [public(o) for o in self.cluster.list("nodes", "", query.get("labelSelector"))]
        return 200, {"kind": "NodeList", "apiVersion": "v1", "metadata": {}, "items": items}

    def _log(self, method, query, ns, name):
        return 200, self.cluster.log(ns, name)

    def _namespaces(self, method, query, name=None):
        return self._namespaced(method, query, ns="", res="namespaces", name=name)

    def _namespaced(self, method, query, ns, res, name=None):
        c = self.cluster
        if method == "GET" and name is None:
            items = [public(o) for o in c.list(res, ns, query.get("labelSelector"))]
            return 200, {"kind": f"{KINDS[res]}List", "apiVersion": "v1", "metadata": {}, "items": items}
        if method == "GET":
            return 200, public(c.get(res, ns, name))
        if method == "POST":
            return 201, public(c.create(res, ns, self._body()))
        if method == "PATCH":
            return 200, public(c.patch(res, ns, name, self._body()))
        if method == "DELETE":
            body = self._body()
            grace = query.get("gracePeriodSeconds", body.get("gracePeriodSeconds"))
            return 200, public(c.delete(res, ns, name, None if grace is None else int(grace)))
        raise ApiError(405, "MethodNotAllowed", f"{method} is not supported on {res}")

    def _cluster_scoped(self, method, query, res, name=None):
        return self._namespaced(method, query, ns="", res=res, name=name)

    def _binding(self, method, query, ns, name):
        if method != "POST":
            raise ApiError(405, "MethodNotAllowed", "bindings are only created")
        return 201, self.cluster.bind(ns, name, self._body())

    def _scale(self, method, query, ns, name):
        c = self.cluster
        if method == "PATCH":
            c.patch("deployments", ns, name, {"spec": {"replicas": int(self._body()["spec"]["replicas"])}})
        elif method != "GET":
            raise ApiError(405, "MethodNotAllowed", f"{method} is not supported on scale")
        dep = c.get("deployments", ns, name)
        return 200, {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": {"name": name, "namespace": ns},
                     "spec": {"replicas": dep["spec"].get("replicas", 1)},
                     "status": {"replicas": dep.get("status", {}).get("replicas", 0)}}

    def _power(self, method, query, name, verb):
        self.cluster.set_node_ready(name, verb == "start")
        return 200, {"kind": "Status", "status": "Success"}


class FakeApiServer:
    """The fake on 127.0.0.1, with its controllers ticking every ``tick`` seconds."""

    def __init__(self, nodes: list[dict], tick: float = 0.02, **kw):
        self.cluster = FakeCluster(nodes, **kw)
        handler = type("BoundHandler", (Handler,), {"cluster": self.cluster})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self.httpd.serve_forever, daemon=True),
                         threading.Thread(target=self._controllers, args=(tick,), daemon=True)]

    def _controllers(self, tick: float) -> None:
        while not self._stop.wait(tick):
            self.cluster.reconcile()

    def __enter__(self) -> "FakeApiServer":
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self.cluster.kubelet is not None:
            with self.cluster.lock:
                self.cluster.kubelet.close()
        self.httpd.shutdown()
        self.httpd.server_close()


class FakeNodePower:
    """Stands in for node-power.yml: flips the fake node's Ready condition, as k3s-killall.sh
    and a restart of K3s do on a real node."""

    def __init__(self, url: str):
        self.url, self.calls = url, []

    def _post(self, node: str, verb: str) -> None:
        self.calls.append((verb, node))
        req = urllib.request.Request(f"{self.url}/fake/nodes/{node}/{verb}", method="POST")
        urllib.request.urlopen(req, timeout=5).read()

    def stop(self, node: str) -> None:
        self._post(node, "stop")

    def start(self, node: str) -> None:
        self._post(node, "start")


@contextmanager
def fake_kube_cluster(state_dir):
    """A KubeCluster (the real backend, the official client over real HTTP) on REACH's default
    testbed, served by the FAKE API server; the namespace exists, nothing is deployed."""
    from kubernetes import client

    from harness.spec.inventory import load_inventory
    from harness.spec.testbed_state import TestbedState
    from harness.testbed.kube.apply import apply_all
    from harness.testbed.kube.backend import KubeCluster
    from harness.testbed.kube.manifests import render
    from harness.testbed.kube.provision import node_states

    inv = load_inventory()
    addresses = {n.name: {"private": f"192.168.50.{i + 10}", "public": f"203.0.113.{i + 10}"}
                 for i, n in enumerate(inv.nodes)}
    nodes = node_states(inv, addresses)
    with FakeApiServer([n.model_dump() for n in nodes]) as server:
        state = TestbedState(backend="k3s", name="fake", status="ready", inventory_checksum="x",
                             inventory=inv.model_dump(mode="json"), created="now", nodes=nodes,
                             rtt_configured_ms=inv.rtt_matrix(),
                             backend_data={"namespace": "harness", "image": "harness/cell:test",
                                           "gateway_node_port": 30080, "drain_seconds": 1, "addresses": addresses,
                                           "failed_nodes": []})
        api = client.ApiClient(client.Configuration(host=server.url))
        cluster = KubeCluster(state, state_dir, api, FakeNodePower(server.url), node_ready_timeout=10)
        cluster.fake = server  # for tests that look behind the API
        apply_all(api, render("namespace.yaml.j2", namespace="harness"))
        try:
            yield cluster
        finally:
            api.close()
