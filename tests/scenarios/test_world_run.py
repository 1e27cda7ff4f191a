"""The common run of a family's own world (``WorldLiveRun``) on its failure paths, with a fake
world (``FakePlay``) and a fake cluster (``FakeCluster``: processes on this host, no nodes; named
fakes, since only the run's bookkeeping is under test) and a real load generator process that
writes a request log, as SIL-GPO's does: a whole run is summarised, a deploy that fails and a
generator that exits early are said in the summary, one that outlives the drain is stopped, and
the world's processes are stopped whatever happened."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from harness import errors
from harness.families.silgpo.live import ServiceGraphScenario
from harness.loadgen.process import LoadProcess
from harness.results.rundir import REQUEST_FIELDS, RunDir
from harness.scenarios.world_run import WorldLiveRun

# the load: writes its start time, then one OK request every 0.05 s for SECONDS, then exits
# with STATUS, or (HANG) stays until it is stopped
GENERATOR = """
import csv, sys, time
out, ready, seconds, status, hang = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"
t0 = time.time() + 0.2
open(ready, "w").write(f"{t0:.6f}\\n")
with open(out, "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(%r)
    t = t0
    while t < t0 + seconds:
        time.sleep(max(0.0, t - time.time()))
        w.writerow((f"{t:.6f}", "12.5", 200, 0, "", "", "type-0"))
        f.flush()
        t += 0.05
while hang:
    time.sleep(0.1)
sys.exit(status)
""" % (REQUEST_FIELDS,)


class FakeCluster:
    """A fake cluster: processes run on this host; nothing else."""

    def start_process(self, node, argv, log):
        return subprocess.Popen(argv, stdout=open(log, "w"), stderr=subprocess.STDOUT)

    def stop_strays(self):
        pass


class FakePlay:
    """A fake world's decision: no processes of its own; its load is GENERATOR."""

    drain_s = 1.0
    model_file = None

    def __init__(self, seconds=1.0, status=0, hang=False, fail_deploy=False):
        self.seconds, self.status, self.hang, self.fail_deploy = seconds, status, hang, fail_deploy
        self.stopped = False

    def placement(self):
        return {"s0": ["srv-0"]}

    def deploy(self, cluster, folder, seed):
        if self.fail_deploy:
            raise errors.TestbedError("the server at 10.0.0.1:18090 did not start (server-0.log: boom)")

    def load(self, cluster, folder, seed, duration_s):
        out, ready = folder / "requests.csv", folder / "loadgen.started"
        argv = [sys.executable, "-c", GENERATOR, str(out), str(ready), str(self.seconds), str(self.status),
                "1" if self.hang else "0"]
        return LoadProcess(cluster, "users", argv, out, folder / "loadgen.log", ready)

    def loads(self):
        return [{"mode": "open", "entry": "type-0", "rate": 20.0}]

    def metrics(self, requests):
        return {"expected_ms": 12.5, "measured": len(requests)}

    def stop(self, cluster):
        self.stopped = True


def play(tmp_path, fake: FakePlay, duration_s: float = 2.0) -> tuple[dict | None, dict]:
    sc = ServiceGraphScenario.model_validate({"world": "servicegraph", "name": "fake", "description": "a fake world",
                                             "duration_s": duration_s, "warmup_s": 0.2, "load": {"rate_scale": 1}})
    out = RunDir(tmp_path / "fake-s0")
    run = WorldLiveRun(FakeCluster(), sc, "fake", fake, 0, out)
    try:
        returned = run.run()
    except errors.TestbedError:
        returned = None
    return returned, json.loads((tmp_path / "fake-s0" / "summary.json").read_text())


def test_a_whole_run_is_summarised_with_the_worlds_measures(tmp_path):
    returned, s = play(tmp_path, FakePlay(seconds=2.5))
    assert returned == s and not s["partial"] and "error" not in s
    assert s["scenario_world"] == "servicegraph" and s["mean_ms"] == 12.5 and s["errors"] == 0
    assert 30 <= s["requests"] <= 40 and s["metrics"] == {"expected_ms": 12.5, "measured": s["requests"]}
    kinds = [line.split(",")[2] for line in (tmp_path / "fake-s0" / "events.csv").read_text().splitlines()[1:]]
    assert kinds[:3] == ["host-speed", "deploy", "load-start"]


def test_a_deploy_that_fails_is_said_and_the_worlds_processes_are_stopped(tmp_path):
    fake = FakePlay(fail_deploy=True)
    returned, s = play(tmp_path, fake)
    assert returned is None and s["partial"] and s["error"] == "stopped before the load began" and fake.stopped


def test_a_generator_that_exits_early_makes_the_run_partial_with_an_error(tmp_path):
    fake = FakePlay(seconds=0.5, status=1)
    _, s = play(tmp_path, fake, duration_s=3.0)
    assert s["partial"] and s["error"].startswith("the load generator exited with status 1") and fake.stopped


def test_a_generator_that_outlives_the_drain_is_stopped(tmp_path):
    fake = FakePlay(seconds=1.0, hang=True)
    t0 = time.monotonic()
    _, s = play(tmp_path, fake, duration_s=1.0)
    assert time.monotonic() - t0 < 15  # the run's end plus the drain (1 s) plus the stop, not forever
    assert not s["partial"] and s["requests"] > 10 and fake.stopped


@pytest.mark.parametrize("name", ["silgpo-edge"])
def test_harness_scenarios_lists_the_world_scenario(name):
    r = subprocess.run([sys.executable, "-m", "harness", "scenarios", "--json"], capture_output=True, text=True,
                       timeout=120)
    row = next(x for x in json.loads(r.stdout) if x["name"] == name)
    assert row["world"] == "servicegraph" and row["app"] is None
