"""The FAKE API server's kubelet and kube-proxy, for tests that need pods which really run.

With ``run_env`` given, the fake API server starts every bound pod's container command as a real
local process (``python`` is this interpreter), so that a whole live run can play against it:

- each pod gets its own loopback address (127.42.x.y) as its pod IP; a harness cell, which binds
  0.0.0.0 inside its pod's network namespace on a real node, is told to bind that address
  (``--host``), the one liberty taken with a container's arguments;
- ``$(VAR)`` in arguments and ``valueFrom.fieldRef`` env (metadata.name, spec.nodeName,
  metadata.labels['k']) are resolved as the kubelet does; a ConfigMap volume is written to a
  folder of its own and its mount path rewritten in the arguments;
- cluster DNS is a rewrite: ``<svc>.<ns>.svc.cluster.local.:<port>`` in a mounted file becomes the
  address of the Service's proxy, a local listener that hands each connection to one Ready pod
  its selector matches, as kube-proxy does per connection;
- a NodePort Service listens on every node's address at its nodePort and, with
  ``externalTrafficPolicy: Local``, hands connections only to pods on that node;
- readiness is the container's ``httpGet`` probe, really asked; a graceful delete sends SIGTERM and
  the pod goes when its process has ended (SIGKILL at the grace period's end); a pod with
  ``restartPolicy: Never`` runs to completion, its stdout the log and its exit status the phase.

Not a container runtime: no isolation, images are not pulled (the command runs from this
checkout, ``PYTHONPATH`` in ``run_env``), no resource limits.
"""

from __future__ import annotations

import itertools
import os
import re
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

DNS = re.compile(r"([a-z0-9-]+)\.([a-z0-9-]+)\.svc\.cluster\.local\.?:(\d+)")


def _field(pod: dict, path: str) -> str:
    if path == "metadata.name":
        return pod["metadata"]["name"]
    if path == "spec.nodeName":
        return pod["spec"].get("nodeName", "")
    m = re.fullmatch(r"metadata\.labels\['(.+)'\]", path)
    if m:
        return (pod["metadata"].get("labels") or {}).get(m.group(1), "")
    raise NotImplementedError(f"the fake kubelet does not resolve fieldRef {path}")


class Proxy:
    """One listening socket handing each connection to a backend chosen then (round robin)."""

    def __init__(self, host: str, port: int, backends):
        self.backends, self.turn = backends, itertools.count()
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, port))
        self.sock.listen(64)
        self.address = f"{host}:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._pipe, args=(conn,), daemon=True).start()

    def _pipe(self, conn: socket.socket) -> None:
        targets = self.backends()
        if not targets:
            conn.close()  # no Ready endpoint: the connection is refused, as kube-proxy's REJECT
            return
        host, port = targets[next(self.turn) % len(targets)]
        try:
            up = socket.create_connection((host, port), timeout=5)
        except OSError:
            conn.close()
            return
        sel = selectors.DefaultSelector()
        sel.register(conn, selectors.EVENT_READ, up)
        sel.register(up, selectors.EVENT_READ, conn)
        try:
            while True:
                for key, _ in sel.select(timeout=60):
                    data = key.fileobj.recv(65536)
                    if not data:
                        return
                    key.data.sendall(data)
        except OSError:
            pass
        finally:
            sel.close()
            conn.close()
            up.close()

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept(), which else keeps the port
        except OSError:
            pass
        self.sock.close()


class FakeKubelet:
    """Processes for the fake's pods, and the proxies of its Services (see the module)."""

    def __init__(self, cluster, run_env: dict):
        self.cluster, self.run_env = cluster, run_env
        self.processes: dict[tuple[str, str], subprocess.Popen] = {}
        self.logs: dict[tuple[str, str], Path] = {}
        self.dirs: dict[tuple[str, str], tempfile.TemporaryDirectory] = {}
        self.proxies: dict[tuple[str, str, str], Proxy] = {}  # (namespace, service, node or "") -> proxy
        self.ips = itertools.count(2)
        self.checked: dict[tuple[str, str], float] = {}

    # ---------------------------------------------------------------- services
    def _endpoints(self, ns: str, selector: dict, port: int, node: str | None = None):
        def backends():
            out = []
            for pod in self.cluster.list("pods", ns, None):
                labels = pod["metadata"].get("labels") or {}
                ready = any(c["type"] == "Ready" and c["status"] == "True" for c in pod["status"].get("conditions", []))
                if ready and not pod["metadata"].get("deletionTimestamp") and all(labels.get(k) == v for k, v in
                                                                                  selector.items()) \
                        and (node is None or pod["spec"].get("nodeName") == node) and pod["status"].get("podIP"):
                    out.append((pod["status"]["podIP"], port))
            return out
        return backends

    def sync_services(self) -> None:
        """A proxy per Service port (its 'cluster IP'), and per node for a NodePort; a deleted
        Service's proxies close (its NodePort is free again)."""
        services = {(s["metadata"]["namespace"], s["metadata"]["name"]) for s in self.cluster.list("services", "", None)}
        for key in [k for k in self.proxies if k[:2] not in services]:
            self.proxies.pop(key).close()
        for svc in self.cluster.list("services", "", None):
            ns, name = svc["metadata"]["namespace"], svc["metadata"]["name"]
            spec = svc["spec"]
            port = spec["ports"][0]
            target = int(port.get("targetPort", port["port"]))
            if spec.get("type") == "NodePort":
                local = spec.get("externalTrafficPolicy") == "Local"
                for node in self.cluster.list("nodes", "", None):
                    key = (ns, name, node["metadata"]["name"])
                    address = next(a["address"] for a in node["status"]["addresses"] if a["type"] == "InternalIP")
                    if key not in self.proxies:
                        self.proxies[key] = Proxy(address, int(port["nodePort"]), self._endpoints(
                            ns, spec["selector"], target, node["metadata"]["name"] if local else None))
            elif (ns, name, "") not in self.proxies:
                self.proxies[(ns, name, "")] = Proxy("127.0.0.1", 0, self._endpoints(ns, spec["selector"], target))

    def _dns(self, text: str) -> str:
        def sub(m):
            proxy = self.proxies.get((m.group(2), m.group(1), ""))
            return proxy.address if proxy else m.group(0)
        return DNS.sub(sub, text)

    # ---------------------------------------------------------------- pods
    def start(self, ns: str, name: str, pod: dict) -> None:
        self.sync_services()
        spec, c = pod["spec"], pod["spec"]["containers"][0]
        env = {e["name"]: e["value"] if "value" in e else _field(pod, e["valueFrom"]["fieldRef"]["fieldPath"])
               for e in c.get("env", [])}
        argv = [re.sub(r"\$\((\w+)\)", lambda m: env.get(m.group(1), m.group(0)), a)
                for a in list(c.get("command", [])) + list(c.get("args", []))]
        if argv and argv[0] == "python":
            argv[0] = sys.executable
        folder = tempfile.TemporaryDirectory(prefix=f"fake-pod-{name}-")
        self.dirs[(ns, name)] = folder
        volumes = {v["name"]: v for v in spec.get("volumes", [])}
        for mount in c.get("volumeMounts", []):
            cm = volumes[mount["name"]].get("configMap")
            if cm is None:
                continue
            where = Path(folder.name) / mount["name"]
            where.mkdir()
            for key, value in self.cluster.get("configmaps", ns, cm["name"]).get("data", {}).items():
                (where / key).write_text(self._dns(value))
            argv = [a.replace(mount["mountPath"], str(where)) for a in argv]
        ip = "127.0.0.1"
        if not spec.get("hostNetwork"):
            n = next(self.ips)
            ip = f"127.42.{n // 250}.{n % 250 + 2}"
            if "harness.workload.cell" in argv:
                argv += ["--host", ip]
        log = Path(folder.name) / "log"
        self.logs[(ns, name)] = log
        with open(log, "w") as out:
            self.processes[(ns, name)] = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                                          env={**os.environ, **self.run_env, **env},
                                                          start_new_session=True)
        pod["status"] = {"phase": "Running", "podIP": ip, "startTime": pod["status"].get("startTime"),
                         "conditions": [{"type": "Ready", "status": "False"}],
                         "containerStatuses": [{"name": c["name"], "ready": False, "restartCount": 0,
                                                "image": c["image"], "imageID": "", "state": {"running": {}}}]}

    def runs(self, ns: str, name: str) -> bool:
        return (ns, name) in self.processes

    def observe(self, ns: str, name: str, pod: dict) -> None:
        """A running pod's process: ended (phase), or ready (its probe)."""
        proc = self.processes[(ns, name)]
        if proc.poll() is not None:
            if pod["status"]["phase"] == "Running":
                never = pod["spec"].get("restartPolicy") == "Never"
                pod["status"]["phase"] = ("Succeeded" if proc.returncode == 0 else "Failed") if never else "Failed"
                pod["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
                pod["status"]["containerStatuses"][0]["state"] = {"terminated": {"exitCode": proc.returncode}}
            return
        ready = pod["status"]["conditions"][0]["status"] == "True"
        now = time.monotonic()
        if ready or now - self.checked.get((ns, name), 0) < 0.2:
            return
        self.checked[(ns, name)] = now
        probe = (pod["spec"]["containers"][0].get("readinessProbe") or {}).get("httpGet")
        if probe is not None:
            try:
                urllib.request.urlopen(f"http://{pod['status']['podIP']}:{probe['port']}{probe['path']}", timeout=0.5)
            except OSError:
                return
        pod["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
        pod["status"]["containerStatuses"][0]["ready"] = True

    def terminate(self, ns: str, name: str) -> None:
        proc = self.processes.get((ns, name))
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)

    def ended(self, ns: str, name: str) -> bool:
        proc = self.processes.get((ns, name))
        return proc is None or proc.poll() is not None

    def remove(self, ns: str, name: str) -> None:
        proc = self.processes.pop((ns, name), None)
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        folder = self.dirs.pop((ns, name), None)
        self.logs.pop((ns, name), None)
        if folder is not None:
            folder.cleanup()

    def log(self, ns: str, name: str) -> str:
        path = self.logs.get((ns, name))
        return path.read_text() if path and path.exists() else ""

    def close(self) -> None:
        for key in list(self.processes):
            self.remove(*key)
        for proxy in self.proxies.values():
            proxy.close()
