"""Really stopping and starting a K3s node: node-power.yml through ansible-runner.

Stopping the k3s-agent service alone leaves the containers running (K3s runs them under
containerd-shim, outside the service's cgroup), so a "failed" node would go on serving; the
playbook runs k3s-killall.sh instead, which kills every container and K3s itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from harness.provision.runner import run_playbook


class NodePower(Protocol):
    def stop(self, node: str) -> None: ...

    def start(self, node: str) -> None: ...


class AnsibleNodePower:
    def __init__(self, inventory: Path, private_data_dir: Path):
        self.inventory, self.private_data_dir = inventory, private_data_dir

    def _run(self, node: str, state: str) -> None:
        run_playbook("node-power.yml", extravars={"harness_target": node, "node_power_state": state},
                     private_data_dir=self.private_data_dir, inventory=self.inventory)

    def stop(self, node: str) -> None:
        self._run(node, "stopped")

    def start(self, node: str) -> None:
        self._run(node, "started")
