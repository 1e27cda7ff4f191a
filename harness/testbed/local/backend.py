"""The local backend of the Cluster interface: nodes are network namespaces with cgroups."""

from __future__ import annotations

import os
import shlex
import subprocess
import time
from pathlib import Path
from typing import Mapping, Sequence

from harness.errors import TestbedError
from harness.spec.testbed_state import NodeState, TestbedState, save_state
from harness.testbed.cluster import Cluster, PopenProcess
from harness.testbed.local import cgroups, daemons, linkemu, network, rtt
from harness.testbed.local.layout import Layout
from harness.testbed.local.pods import LocalPods
from harness.testbed.local.sh import run
from harness.testbed.local.teardown import run_dir

DELAYER = "delayer"


class LocalCluster(LocalPods, Cluster):
    backend = "local"

    def __init__(self, state: TestbedState, state_dir: Path):
        self.state = state
        self.state_dir = state_dir
        self.layout = state.data("layout", state_dir, Layout.from_dict)

    # ------------------------------------------------------------ nodes
    @property
    def nodes(self) -> list[NodeState]:
        return list(self.state.nodes)

    def _layout_node(self, name: str):
        self.node(name)  # a clear KeyError for unknown names
        return self.layout.node(name)

    def node_cgroup(self, name: str) -> str:
        return f"{self.layout.cgroup}/{name}"

    def node_up(self, name: str) -> bool:
        return network.node_link_up(self.layout, self._layout_node(name))

    def fail_node(self, name: str) -> list:
        node = self._layout_node(name)
        # Out of the endpoints first, so no new request picks a pod that is about to die (an
        # idealised, instant failure detection); then kill, which resets the connections in
        # flight (their callers fail at once instead of waiting for a timeout); then cut the link,
        # once the resets had time to cross the slowest link (cut earlier, the kernel drops them
        # in the delay queue and callers hang until their timeout).
        lost = self.forget_pods_on(name)
        cgroups.kill_all(self.node_cgroup(name))
        for pid in network.netns_pids(node.netns):
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        slowest = max((v for v in self.rtt_configured().get(name, {}).values()), default=0.0)
        time.sleep(0.05 + slowest / 2000)
        network.set_node_link(self.layout, node, up=False)
        return lost

    def stray_processes(self) -> dict[str, list[int]]:
        # whatever runs in a node's namespace is a pod or a load generator: the ones not on record
        # were left by a run that was killed (kill -9 leaves no chance to clean up)
        serving, leaving = self.pods_and_leaving()
        tracked = {p.pid for p in serving + leaving}
        out = {}
        for node in self.layout.nodes:
            if left := [pid for pid in network.netns_pids(node.netns) if pid not in tracked and pid != os.getpid()]:
                out[node.name] = left
        return out

    def stop_strays(self, grace_s: float = 3.0) -> int:
        pids = [pid for node_pids in self.stray_processes().values() for pid in node_pids]
        for sig in (15, 9):
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + grace_s
            while sig == 15 and time.monotonic() < deadline and any(daemons.alive(p) for p in pids):
                time.sleep(0.05)
        return len(pids)

    def cpu_scale(self, name: str) -> float:
        limits = cgroups.read_limits(self.node_cgroup(name))
        real = limits["cpu_quota_us"] / limits["cpu_period_us"] if limits["cpu_quota_us"] > 0 else float(os.cpu_count() or 1)
        return self.node(name).cpus / real

    def recover_node(self, name: str) -> None:
        network.set_node_link(self.layout, self._layout_node(name), up=True)

    # ------------------------------------------------------------ latency
    def rtt_configured(self) -> dict[str, dict[str, float]]:
        return {a: dict(row) for a, row in self.state.rtt_configured_ms.items()}

    def set_latency(self, a: str, b: str, rtt_ms: float) -> None:
        if rtt_ms < 0:
            raise ValueError("rtt_ms must be ≥ 0")
        self._layout_node(a), self._layout_node(b)
        if a == b:
            raise ValueError("set_latency needs two different nodes")
        matrix = self.rtt_configured()
        matrix[a][b] = matrix[b][a] = float(rtt_ms)
        if self.state.latency_injector == "netem":
            for cmd in linkemu.netem_change_commands(self.layout, a, b, rtt_ms, self.state.bandwidth_mbit):
                run(["ip", "netns", "exec", self.layout.hub_netns, *cmd])
        else:
            linkemu.write_delay_table(delay_table_path(self.state_dir), self.layout, matrix)
            linkemu.reload_delayer(run_dir(self.state_dir) / f"{DELAYER}.pid")
        self.state.rtt_configured_ms = matrix
        save_state(self.state_dir, self.state)

    def measure_rtt(self) -> dict[str, dict[str, float | None]]:
        up = [n.name for n in self.nodes if self.node_up(n.name)]
        return rtt.measure_matrix(self.layout, up)

    def measure_rtt_spread(self) -> dict[str, dict[str, float | None]]:
        up = [n.name for n in self.nodes if self.node_up(n.name)]
        return rtt.measure_matrix(self.layout, up, count=rtt.SPREAD_COUNT, stat=rtt.spread)

    # ------------------------------------------------------------ processes
    def _wrap(self, node: str, argv: Sequence[str], cgroup: str | None) -> list[str]:
        """A small shell enters the cgroup and then execs ``ip netns exec``: the process is capped
        from its first instruction, and no Python code runs between fork and exec."""
        ln = self._layout_node(node)
        if not self.node_up(node):
            raise TestbedError(f"node {node} is down")
        rel = self.node_cgroup(node) + (f"/{cgroup}" if cgroup else "")
        if cgroup:
            limits = cgroups.read_limits(self.node_cgroup(node))
            cgroups.ensure(rel, limits["cpu_quota_us"], limits["cpu_period_us"], limits["memory_bytes"])
        join = " && ".join(f"echo $$ > {shlex.quote(p)}" for p in cgroups.join_paths(rel))
        return ["/bin/sh", "-c", f'{join} && exec ip netns exec {shlex.quote(ln.netns)} "$@"', "sh", *argv]

    def start_process(self, node: str, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
                      log: Path | None = None, cgroup: str | None = None) -> PopenProcess:
        """Run ``argv`` in the node's namespace, inside the node's cgroup (or a child ``cgroup`` of it)."""
        wrapper = self._wrap(node, argv, cgroup)
        out = open(log, "ab") if log else subprocess.DEVNULL
        try:
            popen = subprocess.Popen(wrapper, env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL,
                                     stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        finally:
            if log:
                out.close()
        # Return only once the process is inside the node: a fail_node right after must find it.
        rel = self.node_cgroup(node) + (f"/{cgroup}" if cgroup else "")
        deadline = time.monotonic() + 5
        while popen.pid not in cgroups.pids(rel) and popen.poll() is None:
            if time.monotonic() > deadline:
                popen.kill()
                raise TestbedError(f"process {argv[0]} did not join node {node}'s cgroup within 5 s")
            time.sleep(0.002)
        return PopenProcess(node, popen)

    def run_in_node(self, node: str, argv: Sequence[str], timeout: float = 60) -> subprocess.CompletedProcess:
        """Run a command to completion inside a node (with its caps) and capture its output."""
        try:
            return subprocess.run(self._wrap(node, argv, None), capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise TestbedError(f"{' '.join(argv)} on {node} did not finish within {timeout:g}s") from None


def open_local(state: TestbedState, state_dir: Path) -> LocalCluster:
    return LocalCluster(state, state_dir)


def delay_table_path(state_dir: Path) -> Path:
    return run_dir(state_dir) / "delays.json"

