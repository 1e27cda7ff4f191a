"""The K3s playbooks: syntax, lint, and what the netem role really renders and checks.

No VM is reachable here; these run the real ansible-playbook, ansible-lint and ansible-runner
against this host (the netem role) or in syntax-check mode (the rest)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.provision.runner import PlaybookFailed, run_playbook
from harness.spec.inventory import load_inventory
from harness.testbed.kube import ansible_inventory
from tests.conftest import REPO

PLAYBOOKS = REPO / "playbooks"
K3S_PLAYBOOKS = ["openstack.yml", "k3s.yml", "cell-image.yml", "netem.yml", "monitoring.yml", "node-power.yml", "rtt.yml",
                 "teardown.yml"]
BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def rendered_inventory(tmp_path_factory) -> Path:
    inv = load_inventory(REPO / "inventories/ssh-hosts.yml")
    files = tmp_path_factory.mktemp("k3s")
    return ansible_inventory.write(ansible_inventory.render(inv, ansible_inventory.ssh_addresses(inv), files),
                                   files / "hosts.yml")


@pytest.mark.parametrize("playbook", K3S_PLAYBOOKS + ["local.yml"])
def test_playbook_passes_syntax_check(playbook, rendered_inventory):
    r = subprocess.run([str(BIN / "ansible-playbook"), "--syntax-check", "-i", str(rendered_inventory), playbook,
                        "-e", "harness_target=edge-a-1"], cwd=PLAYBOOKS, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.slow
def test_ansible_lint_is_clean_at_the_production_profile():
    r = subprocess.run([str(BIN / "ansible-lint"), "--offline", "--profile", "production", "--nocolor"],
                       cwd=PLAYBOOKS, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    assert "0 failure(s), 0 warning(s)" in r.stdout + r.stderr


def test_every_k3s_role_has_defaults_documenting_its_variables():
    for role in ["openstack_vms", "k3s_server", "k3s_agent", "k3s_labels", "netem", "cell_image", "monitoring",
                 "node_power"]:
        defaults = yaml.safe_load((PLAYBOOKS / "roles" / role / "defaults/main.yml").read_text())
        assert defaults and all(k.startswith(role + "_") for k in defaults), role


def test_rendered_inventory_groups_and_delays(rendered_inventory):
    r = subprocess.run([str(BIN / "ansible-inventory"), "-i", str(rendered_inventory), "--list"],
                       capture_output=True, text=True, timeout=60)
    doc = yaml.safe_load(r.stdout)
    assert doc["harness_server"]["hosts"] == ["cloud-a-1"]
    assert len(doc["harness_agents"]["hosts"]) == 6
    edge = doc["_meta"]["hostvars"]["edge-b-1"]
    assert edge["netem_groups"] == [
        {"delay_ms": 0.25, "peers": ["10.0.0.21", "10.0.0.22", "10.0.0.32", "10.0.0.41"]},
        {"delay_ms": 25.0, "peers": ["10.0.0.11", "10.0.0.12"]},
    ]


def _run_netem_locally(tmp_path: Path, **overrides) -> Path:
    """netem.yml against this host as 'edge-b-1' of the SSH sample inventory, rendering only."""
    inv = load_inventory(REPO / "inventories/ssh-hosts.yml")
    doc = ansible_inventory.render(inv, ansible_inventory.ssh_addresses(inv), tmp_path)
    host = doc["all"]["hosts"]["edge-b-1"]
    host.update(ansible_connection="local", ansible_python_interpreter=sys.executable)
    doc["all"]["children"]["harness_nodes"]["children"] = {"harness_agents": {"hosts": {"edge-b-1": {}}}}
    doc["all"]["hosts"] = {"edge-b-1": host}
    script = tmp_path / "netem.sh"
    run_playbook("netem.yml", private_data_dir=tmp_path / "runner",
                 inventory=ansible_inventory.write(doc, tmp_path / "hosts.yml"),
                 extravars={"netem_interface": "eth9", "netem_script_path": str(script), "netem_apply": False,
                            "netem_check_kernel": False, "harness_become": False, **overrides})
    return script


def test_netem_role_renders_the_expected_tc_commands(tmp_path):
    script = _run_netem_locally(tmp_path)
    lines = [ln for ln in script.read_text().splitlines() if ln and not ln.startswith("#")]
    near = ["10.0.0.21", "10.0.0.22", "10.0.0.32", "10.0.0.41"]
    far = ["10.0.0.11", "10.0.0.12"]
    assert lines == [
        "set -e",
        "tc qdisc del dev eth9 root 2>/dev/null || true",
        "tc qdisc add dev eth9 root handle 1: htb default 1",
        "tc class add dev eth9 parent 1: classid 1:1 htb rate 10gbit quantum 60000",
        "tc class add dev eth9 parent 1: classid 1:10 htb rate 10gbit quantum 60000",
        "tc qdisc add dev eth9 parent 1:10 handle 10: netem delay 0.25ms limit 100000",
        *[f"tc filter add dev eth9 protocol ip parent 1: prio 1 u32 match ip dst {a}/32 flowid 1:10" for a in near],
        "tc class add dev eth9 parent 1: classid 1:11 htb rate 10gbit quantum 60000",
        "tc qdisc add dev eth9 parent 1:11 handle 11: netem delay 25ms limit 100000",
        *[f"tc filter add dev eth9 protocol ip parent 1: prio 1 u32 match ip dst {a}/32 flowid 1:11" for a in far],
    ]


def test_netem_role_removal_path_deletes_the_script(tmp_path):
    script = _run_netem_locally(tmp_path)
    assert script.exists()
    _run_netem_locally(tmp_path, netem_state="absent")
    assert not script.exists()


def _kernel_has_netem() -> bool:
    from harness.testbed.local.linkemu import probe_netem

    return probe_netem("hxk8s")[0]


@pytest.mark.root
def test_netem_role_probes_the_kernel_and_says_how_to_get_sch_netem(tmp_path, as_root):
    if shutil.which("tc") is None:
        pytest.fail("tc (iproute2) is missing; make setup installs it")
    if _kernel_has_netem():
        script = _run_netem_locally(tmp_path, netem_check_kernel=True)
        assert "netem delay 25ms" in script.read_text()
    else:
        with pytest.raises(PlaybookFailed, match="no sch_netem.*linux-modules-extra"):
            _run_netem_locally(tmp_path, netem_check_kernel=True)
        assert not (tmp_path / "netem.sh").exists()  # stopped before rendering anything
    leftover = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert "harness-netem-probe" not in leftover


def test_rtt_playbook_measures_every_pair_for_real(tmp_path):
    """rtt.yml runs for real against two hosts that are this machine (connection local, the
    loopback as their address): real pings, parsed into the matrix `harness status` shows."""
    from harness.spec.testbed_state import TestbedState
    from harness.testbed.kube import provision as kube_provision

    hosts = {name: {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                    "harness_private_address": "127.0.0.1"} for name in ("node-a", "node-b")}
    state_dir = tmp_path / ".harness"
    inv_file = kube_provision.inventory_file(state_dir)
    inv_file.parent.mkdir(parents=True)
    inv_file.write_text(yaml.safe_dump({"all": {"children": {"harness_nodes": {"hosts": hosts}}}}))
    state = TestbedState(backend="k3s", name="t", status="ready", inventory_checksum="x", inventory={}, created="now",
                         nodes=[])
    matrix = kube_provision.measure_rtt(state, state_dir, ["node-a", "node-b"])
    assert matrix["node-a"]["node-a"] == 0.0
    for a, b in (("node-a", "node-b"), ("node-b", "node-a")):
        assert isinstance(matrix[a][b], float) and 0 < matrix[a][b] < 20, matrix


def test_ping_lines_with_every_ping_lost_are_unreachable():
    from harness.testbed.kube.provision import parse_ping_lines

    assert parse_ping_lines(["a b 1.250\na c \n", "b a 1.5\n"]) == {"a": {"b": 1.25, "c": None}, "b": {"a": 1.5}}
