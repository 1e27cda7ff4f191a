"""Runs that cannot corrupt each other or lose data, on the real local testbed: two runs at once,
a run killed with -9, a full disk, a second Ctrl-C during clean-up, a read-only results folder."""

from __future__ import annotations

import csv
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from harness.testbed.pods import undeploy
from tests.conftest import REPO

pytestmark = [pytest.mark.root, pytest.mark.slow, pytest.mark.load_tolerant]  # processes and files, no timing

SHORT = {"name": "short", "description": "chain, one user", "duration_s": 40, "app": "chain", "replicas": 1,
         "warmup_s": 2, "rescheduler": {"period_s": 5, "start_s": 2, "max_moves": 2}}


def start(state_dir: Path, scenario: Path, out: Path, policy: str = "default") -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "harness", "--state-dir", str(state_dir), "run", str(scenario),
                             "--policy", policy, "--out", str(out)], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def harness(state_dir: Path, *args, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", "--state-dir", str(state_dir), *args], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout)


def wait_for_requests(out: Path, timeout: float = 60) -> Path:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for f in out.glob("*/*-s0/requests.csv"):
            if f.read_text().count("\n") > 3:
                return f.parent
        time.sleep(0.3)
    raise AssertionError("the run never sent requests")


def netns_processes(cluster) -> list[str]:
    pids = []
    for n in cluster.layout.nodes:
        pids += subprocess.run(["ip", "netns", "pids", n.netns], capture_output=True, text=True).stdout.split()
    return pids


@pytest.fixture
def testbed(local_testbed, tmp_path):
    sc = tmp_path / "short.yaml"
    sc.write_text(yaml.safe_dump(SHORT))
    local_testbed.scenario = sc
    yield local_testbed
    c = local_testbed.cluster
    undeploy(c)
    c.stop_strays()
    for n in c.nodes:
        if not c.node_up(n.name):
            c.recover_node(n.name)


def test_a_second_run_refuses_and_a_killed_run_is_recovered_by_undeploy(testbed, tmp_path):
    # finding 1: two runs at once both started, clashed and lost data; orphans stayed
    first = start(testbed.state_dir, testbed.scenario, tmp_path / "a")
    try:
        wait_for_requests(tmp_path / "a")
        second = harness(testbed.state_dir, "run", str(testbed.scenario), "--policy", "default", "--out", str(tmp_path / "b"))
        assert second.returncode == 2
        line = second.stderr.strip()
        assert len(line.splitlines()) == 1 and "the testbed is busy" in line and f"pid {first.pid}" in line
        assert not (tmp_path / "b").exists() or not any((tmp_path / "b").iterdir())
        assert harness(testbed.state_dir, "undeploy").returncode == 2  # the lock covers every command that changes pods
        first.send_signal(signal.SIGKILL)  # no chance to clean up
        first.wait(10)
    finally:
        if first.poll() is None:
            first.kill()
    cluster = testbed.cluster
    assert cluster.pods() and netns_processes(cluster)  # what the killed run left: pods and its load generator
    again = harness(testbed.state_dir, "run", str(testbed.scenario), "--policy", "default", "--out", str(tmp_path / "c"))
    assert again.returncode == 2 and "'harness undeploy' first" in again.stderr  # the next run refuses, with the word
    serving, leaving = cluster.pods_and_leaving()  # 4, or more if the kill came mid-move
    r = harness(testbed.state_dir, "undeploy")
    assert r.returncode == 0, r.stderr
    assert len(serving) >= 4 and f"stopped {len(serving) + len(leaving)} pods" in r.stdout
    assert "stray processes" in r.stdout  # the orphaned load generator too
    assert netns_processes(cluster) == [] and cluster.pods() == [] and cluster.leaving() == []
    assert harness(testbed.state_dir, "status").returncode == 0


def test_disk_full_stops_the_run_with_one_line_and_keeps_what_was_written(testbed, tmp_path):
    # finding 2: writes failed silently until the end, then a traceback, no summary, pods left running
    mnt = tmp_path / "small"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)], check=True)
    try:
        p = start(testbed.state_dir, testbed.scenario, mnt)
        try:
            run_dir = wait_for_requests(mnt)
            time.sleep(2)
            # the disk fills up mid-run
            subprocess.run(["dd", "if=/dev/zero", f"of={mnt / 'filler'}", "bs=4k"], capture_output=True)
            _, err = p.communicate(timeout=90)
        finally:
            if p.poll() is None:
                p.kill()
        assert p.returncode == 1, err[-2000:]
        lines = [ln for ln in err.strip().splitlines() if ln.strip()]
        assert len(lines) == 1 and "cannot write results" in lines[0] and "No space left on device" in lines[0], err
        assert testbed.cluster.pods() == [] and netns_processes(testbed.cluster) == []  # pods stopped
        assert (run_dir / "inputs/app.json").exists()
        assert len((run_dir / "requests.csv").read_text().splitlines()) > 5  # what was written is kept
        assert not list(run_dir.glob("*.tmp"))
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_a_second_ctrl_c_during_clean_up_does_not_skip_it(testbed, tmp_path):
    # finding 6: an impatient second Ctrl-C left cells running and no summary
    p = start(testbed.state_dir, testbed.scenario, tmp_path / "r")
    try:
        run_dir = wait_for_requests(tmp_path / "r")
        time.sleep(SHORT["warmup_s"] + 2)  # requests after the warm-up, which the summary counts
        p.send_signal(signal.SIGINT)
        time.sleep(0.3)
        for _ in range(3):  # while it cleans up (the pods drain for a second or more)
            p.send_signal(signal.SIGINT)
            time.sleep(0.2)
        _, err = p.communicate(timeout=90)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130, err[-2000:]
    assert "it finishes first" in err
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["partial"] and summary["requests"] > 0
    # Locust's own files, as `locust --csv locust` writes them, final totals included
    stats = list(csv.DictReader((run_dir / "locust_stats.csv").open()))
    total = next(r for r in stats if r["Name"] == "Aggregated")
    assert int(total["Request Count"]) >= summary["requests"] and float(total["50%"]) > 0
    assert (run_dir / "locust_stats_history.csv").read_text().count("\n") > 2
    assert (run_dir / "locust_failures.csv").read_text().startswith("Method,Name,Error,Occurrences")
    report = (run_dir / "locust_report.html").read_text()  # Locust's own HTML report, written as the load ended
    assert report.lstrip().lower().startswith("<!doctype html") and "Locust" in report
    assert testbed.cluster.pods() == [] and netns_processes(testbed.cluster) == []
    r = harness(testbed.state_dir, "run", str(testbed.scenario), "--policy", "nope", "--out", str(tmp_path / "x"))
    assert "busy" not in r.stderr and "undeploy" not in r.stderr  # the next run is not refused for leftovers


def test_read_only_results_folder_is_one_line_before_deploying(testbed, tmp_path):
    # finding 3: --out on a read-only file system gave a traceback
    ro = tmp_path / "ro"
    ro.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(ro)], check=True)
    try:
        r = harness(testbed.state_dir, "run", str(testbed.scenario), "--policy", "default", "--out", str(ro / "results"))
        assert r.returncode == 2 and r.stderr.strip().count("\n") == 0, r.stderr
        assert "--out: cannot write there: Read-only file system" in r.stderr
        assert testbed.cluster.pods() == []
    finally:
        subprocess.run(["umount", "-l", str(ro)], check=False)


def test_sigterm_takes_the_ctrl_c_path(testbed, tmp_path):
    # issue 43, probe 3: `timeout`, `kill`, systemd and CI cancellation send SIGTERM, which once
    # killed harness at once: 12 cells and a load generator left running, no partial summary
    p = start(testbed.state_dir, testbed.scenario, tmp_path / "r")
    try:
        run_dir = wait_for_requests(tmp_path / "r")
        time.sleep(SHORT["warmup_s"] + 2)
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=90)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130, err[-2000:]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["partial"] and summary["requests"] > 0
    assert testbed.cluster.pods() == [] and netns_processes(testbed.cluster) == []
    assert '"interrupted"' in (run_dir / "events.csv").read_text() or ",interrupted," in (run_dir / "events.csv").read_text()
    rows = (run_dir / "requests.csv").read_text()
    time.sleep(1.5)
    assert (run_dir / "requests.csv").read_text() == rows  # nothing goes on writing into the finished run


def test_nodes_a_killed_run_left_down_are_named_and_brought_back_by_undeploy(testbed, tmp_path):
    # issue 43, probe 4: after kill -9 following a node failure, undeploy left two nodes down
    # without a word, and the next run measured on 5 of 7 nodes
    sc = yaml.safe_load(testbed.scenario.read_text())
    sc["faults"] = [{"at_s": 1, "kind": "node-failure", "node_types": ["edge-a", "cloud-a"]}]
    failing = tmp_path / "failing.yaml"
    failing.write_text(yaml.safe_dump(sc))
    p = start(testbed.state_dir, failing, tmp_path / "a")
    try:
        run_dir = wait_for_requests(tmp_path / "a")
        deadline = time.monotonic() + 30
        while "node-failure" not in (run_dir / "events.csv").read_text() and time.monotonic() < deadline:
            time.sleep(0.2)
        p.send_signal(signal.SIGKILL)
        p.wait(10)
    finally:
        if p.poll() is None:
            p.kill()
    down = sorted(n.name for n in testbed.cluster.nodes if not testbed.cluster.node_up(n.name))
    assert len(down) == 2
    undeploy(testbed.cluster)
    testbed.cluster.stop_strays()
    refused = harness(testbed.state_dir, "run", str(testbed.scenario), "--policy", "default", "--out", str(tmp_path / "b"))
    assert refused.returncode == 2 and all(n in refused.stderr for n in down), refused.stderr
    assert "'harness undeploy' brings them back" in refused.stderr
    r = harness(testbed.state_dir, "undeploy")
    assert r.returncode == 0 and f"brought back 2 nodes left down by a run that was killed: {', '.join(down)}" in r.stdout
    assert all(testbed.cluster.node_up(n.name) for n in testbed.cluster.nodes)
