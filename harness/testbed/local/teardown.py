"""Remove everything a local testbed made, found by its name prefix, so it also works after a
crash or Ctrl-C half-way through provisioning (when no complete state file exists)."""

from __future__ import annotations

import os
import shutil
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from harness.provision.runner import playbook_processes, stop_playbooks
from harness.testbed.local import cgroups, daemons
from harness.testbed.local.layout import base_names
from harness.testbed.local.network import link_exists, netns_list, netns_pids
from harness.testbed.local.sh import run


@dataclass
class Leftovers:
    namespaces: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    cgroups: list[str] = field(default_factory=list)
    daemons: list[str] = field(default_factory=list)
    sysctls: list[str] = field(default_factory=list)  # host settings changed and not yet put back
    playbooks: list[str] = field(default_factory=list)  # ansible processes of a provision that was killed

    def empty(self) -> bool:
        return not (self.namespaces or self.links or self.cgroups or self.daemons or self.sysctls or self.playbooks)

    def describe(self) -> str:
        parts = [f"{k}: {', '.join(v)}" for k, v in vars(self).items() if v]
        return "; ".join(parts) or "nothing"


def run_dir(state_dir: Path) -> Path:
    return state_dir / "run"


def find(prefix: str, state_dir: Path) -> Leftovers:
    names = base_names(prefix, "10.0.0.0/16")  # the subnet does not matter for names
    left = Leftovers()
    left.namespaces = [ns for ns in netns_list() if ns.startswith(f"{prefix}-")]
    left.links = [names["root_veth"]] if link_exists(names["root_veth"]) else []
    left.cgroups = [names["cgroup"]] if cgroups.exists(names["cgroup"]) else []
    rd = run_dir(state_dir)
    if rd.exists():
        left.daemons = [p.stem for p in rd.glob("*.pid") if daemons.read_pid(p) is not None]
        left.sysctls = [cgroups.SLICE_SYSCTL] if (rd / cgroups.SLICE_SAVED).exists() else []
    left.playbooks = [f"pid {pid}" for pid in playbook_processes(state_dir / "ansible")]
    return left


def _kill_netns_processes(ns: str) -> None:
    for _ in range(50):
        pids = netns_pids(ns)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.02)


def teardown(prefix: str, state_dir: Path) -> Leftovers:
    """Remove daemons, namespaces (with their links and iptables rules), the root link, cgroups,
    the state file and ansible-runner's artifacts. Idempotent. Returns what it removed."""
    removed = find(prefix, state_dir)
    for _ in range(20):  # a playbook still running would go on making what is removed below
        if not stop_playbooks(state_dir / "ansible"):
            break
        time.sleep(0.05)
    rd = run_dir(state_dir)
    for pidfile in sorted(rd.glob("*.pid")) if rd.exists() else []:
        daemons.stop(pidfile)
    names = base_names(prefix, "10.0.0.0/16")
    if cgroups.exists(names["cgroup"]):
        cgroups.kill_all(names["cgroup"])
    for ns in removed.namespaces:
        _kill_netns_processes(ns)
        run(["ip", "netns", "del", ns], check=False)
    if link_exists(names["root_veth"]):  # normally gone with the hub namespace
        run(["ip", "link", "del", names["root_veth"]], check=False)
    cgroups.remove_tree(names["cgroup"])
    cgroups.restore_bandwidth_slice(rd)
    for f in ("testbed.yaml", "testbed.tmp", "deployment.json"):
        (state_dir / f).unlink(missing_ok=True)
    if rd.exists():
        shutil.rmtree(rd)
    # ansible-runner's artifacts: playbook output and the command it ran (nothing of the testbed
    # needs them once it is gone)
    shutil.rmtree(state_dir / "ansible", ignore_errors=True)
    return removed


def teardown_testbed(state, inventory, state_dir: Path) -> str:
    """The backend table's teardown: the prefix from the state file (or, when it is gone or
    corrupt, the inventory's); everything under it removed, or a TestbedError naming what stayed."""
    from harness.errors import TestbedError

    prefix = (state.backend_data.get("layout", {}).get("prefix") if state is not None else None) or inventory.local.prefix
    removed = teardown(prefix, state_dir)
    left = find(prefix, state_dir)
    if not left.empty():
        raise TestbedError(f"teardown left {left.describe()}")
    return "nothing to remove" if removed.empty() else f"removed {removed.describe()}"
