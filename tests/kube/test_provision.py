"""K3s provisioning's plumbing: playbook order, the state recorded before the first playbook,
the rendered inventory, the image's build context and the Prometheus manifest. The playbooks
themselves cannot run here (no VMs); `run_playbook` is replaced by a recorder (a fake, named so),
and a failing playbook must leave a state `harness teardown` can act on."""

from __future__ import annotations

import json
import tarfile
from collections import Counter
from pathlib import Path

import pytest
import yaml

from harness.provision.runner import PlaybookFailed, PlaybookResult
from harness.spec.inventory import load_inventory
from harness.spec.testbed_state import load_state
from harness.testbed.kube import provision as kube
from tests.conftest import REPO


class RecordingRunner:
    """FAKE run_playbook: records the calls and what the state file said at each."""

    def __init__(self, state_dir, fail_at: str | None = None):
        self.state_dir, self.fail_at, self.calls = state_dir, fail_at, []

    def __call__(self, playbook, *, extravars, private_data_dir, on_progress=None, inventory=None):
        state = load_state(self.state_dir)
        self.calls.append((playbook, inventory, state.status if state else None, dict(extravars)))
        if playbook == self.fail_at:
            raise PlaybookFailed("Install K3s", "unreachable")
        if playbook == "openstack.yml":
            hosts = {n: {"private": f"10.1.0.{i}", "public": f"198.51.100.{i}"}
                     for i, n in enumerate(["cloud-a-1", "cloud-a-2", "edge-a-1", "edge-a-2", "edge-b-1", "edge-b-2",
                                            "client-a-1"])}
            Path(extravars["openstack_vms_hosts_file"]).write_text(json.dumps(hosts))
        results = {}
        if playbook == "rtt.yml":
            results = {"Ping every other node": [{"stdout": "cloud-a-1 edge-a-1 50.4\nedge-a-1 cloud-a-1 50.2\n"}]}
        return PlaybookResult("successful", Counter(ok=1), results)


@pytest.mark.parametrize("inventory", ["ssh-hosts.yml", "openstack.yml"])
def test_provision_runs_the_playbooks_in_order_and_records_the_state(tmp_path, monkeypatch, inventory):
    inv = load_inventory(REPO / "inventories" / inventory)
    state_dir = tmp_path / ".harness"
    runner = RecordingRunner(state_dir)
    monkeypatch.setattr(kube, "run_playbook", runner)
    state, _ = kube.provision(inv, state_dir)
    order = [c[0] for c in runner.calls]
    first = ["openstack.yml"] if inv.k3s.provider == "openstack" else []
    assert order == first + ["k3s.yml", "cell-image.yml", "netem.yml", "monitoring.yml", "rtt.yml"]
    assert all(c[2] == "provisioning" for c in runner.calls)  # recorded before anything ran
    assert all(c[1] == kube.inventory_file(state_dir) for c in runner.calls if c[0] != "openstack.yml")
    saved = load_state(state_dir)
    assert saved.status == "ready" and saved.backend == "k3s"
    assert {n.name for n in saved.nodes} == {n.name for n in inv.nodes}
    assert saved.rtt_measured_ms["cloud-a-1"]["edge-a-1"] == 50.4
    assert saved.prometheus_url.endswith(":30090")
    rendered = yaml.safe_load(kube.inventory_file(state_dir).read_text())
    assert set(rendered["all"]["hosts"]) == {n.name for n in inv.nodes}
    # credentials never leave clouds.yaml: nothing secret in the state or the rendered inventory
    text = (state_dir / "testbed.yaml").read_text() + kube.inventory_file(state_dir).read_text()
    assert "password" not in text.lower() and "auth_url" not in text.lower()
    with tarfile.open(kube.files_dir(state_dir) / "cell-image.tar.gz") as tar:
        names = set(tar.getnames())
    assert {"Dockerfile", "requirements.txt", "harness/workload/cell.py"} <= names
    assert not any("__pycache__" in n or n.endswith(".pt") for n in names)
    kinds = [d["kind"] for d in yaml.safe_load_all((kube.files_dir(state_dir) / "prometheus.yaml").read_text())]
    assert "Deployment" in kinds and "Service" in kinds


def test_a_failed_playbook_leaves_a_state_teardown_can_use(tmp_path, monkeypatch):
    inv = load_inventory(REPO / "inventories/ssh-hosts.yml")
    state_dir = tmp_path / ".harness"
    monkeypatch.setattr(kube, "run_playbook", RecordingRunner(state_dir, fail_at="k3s.yml"))
    with pytest.raises(PlaybookFailed):
        kube.provision(inv, state_dir)
    state = load_state(state_dir)
    assert state.status == "provisioning" and state.backend == "k3s"
    runner = RecordingRunner(state_dir)
    monkeypatch.setattr(kube, "run_playbook", runner)
    kube.teardown(state, state_dir)
    assert [c[0] for c in runner.calls] == ["teardown.yml"]
    assert runner.calls[0][3]["harness_provider"] == "ssh"
    assert load_state(state_dir) is None
