"""Pods on the local testbed: cell processes in a node's namespace and cgroup, tracked in
``<state>/deployment.json``; endpoints and Prometheus targets are files the cells and
Prometheus reread when they change."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
import urllib.request
from pathlib import Path

from harness.errors import TestbedError
from harness.spec.app import App, app_to_json, parse_app
from harness.testbed.local import daemons
from harness.testbed.pods import Pod, pod_name

BASE_PORT = 8080
# how often a pod being waited for has its node checked: one that fails meanwhile is not waited for
NODE_CHECK_S = 0.5
# deployment.json is read, changed and written back; a live run changes it from several threads
# (rescheduler, self-healing, autoscaler), so every such sequence holds this lock.
_LOCK = threading.RLock()


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


class LocalPods:
    """The pod half of LocalCluster (mixed in), kept apart because it is the part that grows."""

    state_dir: Path

    # files -------------------------------------------------------------
    @property
    def _deployment_file(self) -> Path:
        return self.state_dir / "deployment.json"

    @property
    def _run(self) -> Path:
        return self.state_dir / "run"

    @property
    def app_file(self) -> Path:
        return self._run / "app.json"

    @property
    def endpoints_file(self) -> Path:
        return self._run / "endpoints.json"

    @property
    def targets_file(self) -> Path:
        return self._run / "prometheus-targets.json"

    def _load(self) -> dict:
        try:
            return json.loads(self._deployment_file.read_text())
        except FileNotFoundError:
            return {"serial": 0, "pods": [], "retired": []}

    def _save(self, d: dict) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        _write_atomic(self._deployment_file, json.dumps(d, indent=1))

    # app -----------------------------------------------------------------
    def set_app(self, app: App) -> None:
        self._run.mkdir(parents=True, exist_ok=True)
        _write_atomic(self.app_file, app_to_json(app))

    def app(self) -> App | None:
        if not self.app_file.exists():
            return None
        return parse_app(json.loads(self.app_file.read_text()), str(self.app_file))

    # pods ----------------------------------------------------------------
    def pods_and_leaving(self) -> tuple[list[Pod], list[Pod]]:
        d = self._load()
        serving, going = [], []
        for p in d["pods"]:
            (going if p["name"] in d["retired"] else serving).append(Pod(**p))
        return serving, going

    def start_pod(self, service: str, node: str) -> Pod:
        app = self.app()
        if app is None or service not in app.services:
            raise TestbedError(f"no app with service {service!r} is set; deploy the app first")
        self.check_binding(app, service, node)
        with _LOCK:
            d = self._load()
            d["serial"] += 1
            name = pod_name(service, d["serial"])
            used = {p["port"] for p in d["pods"] if p["node"] == node}
            port = next(p for p in range(BASE_PORT, BASE_PORT + 10000) if p not in used)
            logs = self._run / "pods"
            logs.mkdir(parents=True, exist_ok=True)
            proc = self.start_process(node, [
                sys.executable, "-m", "harness.workload.cell", "--app", str(self.app_file.resolve()),
                "--service", service, "--pod", name, "--node", node, "--port", str(port),
                "--zone", self.node(node).site or self.node(node).tier,
                "--endpoints", str(self.endpoints_file.resolve())], log=logs / f"{name}.log")
            pod = Pod(name=name, service=service, node=node, address=self.node(node).address, port=port, pid=proc.pid)
            d["pods"].append(pod.to_dict())
            self._save(d)
            return pod

    def wait_ready(self, pod: Pod, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        url = f"http://{pod.endpoint}/healthz"
        node_checked, down = time.monotonic(), 0
        while True:
            try:
                with urllib.request.urlopen(url, timeout=1) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            if pod.pid is not None and not daemons.alive(pod.pid):
                raise TestbedError(f"pod {pod.name} on {pod.node} exited: {self._log_tail(pod)}")
            if time.monotonic() - node_checked > NODE_CHECK_S:  # an `ip` call: not at every poll
                node_checked = time.monotonic()
                down = 0 if self.node_up(pod.node) else down + 1
                if down >= 2:  # twice in a row: not a link still coming up after a recovery
                    raise TestbedError(f"pod {pod.name}: its node {pod.node} is down")
            if time.monotonic() > deadline:
                raise TestbedError(f"pod {pod.name} on {pod.node} not ready after {timeout:.0f}s: {self._log_tail(pod)}")
            time.sleep(0.05)

    def _log_tail(self, pod: Pod) -> str:
        log = self._run / "pods" / f"{pod.name}.log"
        return log.read_text(errors="replace")[-400:].strip() if log.exists() else "(no log)"

    def retire_pod(self, pod: Pod) -> None:
        with _LOCK:
            d = self._load()
            if pod.name not in d["retired"]:
                d["retired"].append(pod.name)
            self._save(d)

    def stop_pod(self, pod: Pod, drain_seconds: float = 10) -> None:
        if pod.pid is not None and daemons.alive(pod.pid):
            # the cell drains for up to drain_seconds itself; 2 s more for its shutdown
            daemons.terminate(pod.pid, drain_seconds + 2 if drain_seconds > 0 else 0)
        with _LOCK:
            d = self._load()
            d["pods"] = [p for p in d["pods"] if p["name"] != pod.name]
            d["retired"] = [n for n in d["retired"] if n != pod.name]
            self._save(d)

    def pod_alive(self, pod: Pod) -> bool:
        return pod.pid is not None and daemons.alive(pod.pid)

    def kill_pod(self, pod: Pod) -> None:
        if pod.pid is not None and daemons.alive(pod.pid):
            os.kill(pod.pid, signal.SIGKILL)

    def publish(self) -> None:
        with _LOCK:
            self._publish()

    def _publish(self) -> None:
        pods = self.pods()
        table: dict[str, list[str]] = {}
        for p in pods:
            table.setdefault(p.service, []).append(p.endpoint)
        self._run.mkdir(parents=True, exist_ok=True)
        _write_atomic(self.endpoints_file, json.dumps(table, indent=1))
        targets = [{"targets": [p.endpoint], "labels": {"service": p.service, "pod": p.name, "node": p.node}} for p in pods]
        _write_atomic(self.targets_file, json.dumps(targets, indent=1))

    def forget_pods_on(self, node: str) -> list[Pod]:
        """After a node failure its pods are gone: drop them from the deployment and the endpoints."""
        with _LOCK:
            d = self._load()
            gone = [Pod(**p) for p in d["pods"] if p["node"] == node]
            d["pods"] = [p for p in d["pods"] if p["node"] != node]
            d["retired"] = [n for n in d["retired"] if n not in {p.name for p in gone}]
            self._save(d)
            self._publish()
            return gone

