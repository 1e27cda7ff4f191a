"""Teardown leaves nothing behind: after a normal run, after Ctrl-C in the middle of
provisioning, and after a test that fails half-way."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
import yaml

from harness.testbed.local import cgroups
from harness.testbed.local.teardown import find, teardown
from tests.conftest import REPO, small_inventory, unique_prefix
from tests.testbed.data.fails_halfway import sleep_seconds

pytestmark = [pytest.mark.root, pytest.mark.slow]


def harness(*args: str, state_dir, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", "--state-dir", str(state_dir), *args],
                          capture_output=True, text=True, timeout=120, **kw)


def assert_nothing_left(prefix: str, state_dir) -> None:
    left = find(prefix, state_dir)
    assert left.empty(), left.describe()
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert f"{prefix}-" not in netns
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    assert f"{prefix}-root" not in links
    assert not any(p.name == f"harness-{prefix}" for c in ("cpu", "memory", "") for p in
                   (__import__("pathlib").Path("/sys/fs/cgroup") / c).glob("harness-*"))
    rules = subprocess.run(["iptables", "-S"], capture_output=True, text=True).stdout
    assert "HARNESS" not in rules  # our rules only ever live inside the hub namespace
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert str(state_dir) not in ps  # the delayer is started with paths under the state dir


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


def test_teardown_after_ctrl_c_during_provisioning(as_root, tmp_path):
    inv = small_inventory(n_edge=2)
    inv_file = tmp_path / "inv.yaml"
    inv_file.write_text(yaml.safe_dump(inv.model_dump(mode="json")))
    state_dir = tmp_path / ".harness"
    proc = subprocess.Popen([sys.executable, "-m", "harness", "--state-dir", str(state_dir), "provision", "-i", str(inv_file)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while f"{inv.local.prefix}-hub" not in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout:
            assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read() if proc.poll() is not None else "timeout"
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal sends to the whole foreground group
        proc.wait(60)
        # Ansible's forked workers may finish their task (a mkdir, an ip command) a moment after the
        # harness exits: the user's teardown comes after the group has ended, so does this one
        deadline = time.monotonic() + 30
        while _group_alive(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        err = proc.stderr.read()
        assert proc.returncode == 130, err
        assert "'harness teardown' removes whatever was left" in err
        assert not find(inv.local.prefix, state_dir).empty()  # something was half-built

        r = harness("teardown", state_dir=state_dir)
        assert r.returncode == 0, r.stderr
        assert "removed" in r.stdout and f"{inv.local.prefix}-hub" in r.stdout
        assert_nothing_left(inv.local.prefix, state_dir)
        # the state file is gone now: the inventory names the prefix. (On CI a node namespace has
        # appeared after the first teardown in 4 of 5 runs of this session, never here in 7 tries, also
        # under load: a straggler of the interrupted provisioning not yet found. Teardown from the
        # inventory must clean that too.)
        again = harness("teardown", "-i", str(inv_file), state_dir=state_dir)
        assert again.returncode == 0 and ("nothing to remove" in again.stdout or "removed" in again.stdout)
        assert_nothing_left(inv.local.prefix, state_dir)
    finally:
        if proc.poll() is None:
            proc.kill()
        teardown(inv.local.prefix, state_dir)  # whatever an assertion above left behind


def test_teardown_after_normal_provisioning_via_cli(as_root, tmp_path):
    inv = small_inventory()
    inv_file = tmp_path / "inv.yaml"
    inv_file.write_text(yaml.safe_dump(inv.model_dump(mode="json")))
    state_dir = tmp_path / ".harness"
    secret = "s3cr3t-" + os.urandom(4).hex()  # a credential in the environment of whoever provisions
    host_slice = cgroups.SLICE.read_text().strip()
    cgroups.SLICE.write_text("4000")  # a host value unlike the testbed's, to see it put back
    try:
        r = harness("provision", "-i", str(inv_file), "--no-measure", state_dir=state_dir,
                    env={**os.environ, "HARNESS_TEST_TOKEN": secret})
        assert r.returncode == 0, r.stderr
        assert int(cgroups.SLICE.read_text()) == inv.local.bandwidth_slice_us != 4000
        assert "provisioned" in r.stderr and "cloud-a-1" in r.stdout
        # finding 7: ansible-runner wrote the whole environment into its artifacts and kept it
        kept = [p for p in (state_dir / "ansible").rglob("*") if p.is_file()]
        assert kept and not [p for p in kept if secret in p.read_text(errors="replace")]
        assert not [p for p in kept if "HARNESS_TEST_TOKEN" in p.read_text(errors="replace")]
    finally:
        r = harness("teardown", state_dir=state_dir)
        slice_after = cgroups.SLICE.read_text().strip()
        cgroups.SLICE.write_text(host_slice)
    assert r.returncode == 0, r.stderr
    assert slice_after == "4000"  # the host's kernel setting is back
    assert_nothing_left(inv.local.prefix, state_dir)
    assert not (state_dir / "ansible").exists()  # nothing of ansible-runner's is kept after teardown


def test_a_test_that_fails_half_way_leaves_nothing(as_root, tmp_path):
    prefix = unique_prefix()
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--basetemp", str(tmp_path / "inner"),
                        str(REPO / "tests/testbed/data/fails_halfway.py")],
                       capture_output=True, text=True, timeout=300, cwd=REPO,
                       env={**os.environ, "HARNESS_TEST_PREFIX": prefix})
    assert "deliberate failure half-way" in r.stdout, r.stdout[-2000:]
    assert "1 failed" in r.stdout
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert f"{prefix}-" not in netns
    assert_nothing_left(prefix, tmp_path / "nonexistent")
    sleeper = f"sleep {sleep_seconds(prefix)}"
    assert sleeper not in subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout


def test_bad_inventory_exits_2_with_one_line_and_builds_nothing(tmp_path):
    inv = small_inventory()
    doc = inv.model_dump(mode="json")
    doc["nodes"][1]["type"] = "edge-z"
    f = tmp_path / "bad.yaml"
    f.write_text(yaml.safe_dump(doc))
    r = harness("provision", "-i", str(f), state_dir=tmp_path / ".harness")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert lines == [f"harness: error: {f}: nodes[1].type: unknown node type 'edge-z' (known: client-a, cloud-a, edge-a, edge-b)"]
    assert not (tmp_path / ".harness").exists()
    assert inv.local.prefix not in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
