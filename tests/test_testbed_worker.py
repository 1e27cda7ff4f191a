"""The root tests' worker (tests/testbed_worker.py): what a test does there is reported here, once,
with its outcome, output and duration, and a failure there fails the session."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import REPO
from tests.testbed_worker import SERIAL_ENV, WORKER_ENV

pytestmark = pytest.mark.root


def inner(tmp_path, *args, **env) -> subprocess.CompletedProcess:
    # this test may itself run in a worker, or in a serial session
    clean = {k: v for k, v in os.environ.items() if k not in (WORKER_ENV, SERIAL_ENV)}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", "--durations=0", "-vv",
                           "--basetemp", str(tmp_path / "inner"), str(REPO / "tests/data/split/inner.py"), *args],
                          cwd=REPO, capture_output=True, text=True, timeout=120, env={**clean, **env})


def test_root_tests_run_in_the_worker_and_are_reported_here_once(as_root, tmp_path):
    r = inner(tmp_path)
    out = r.stdout
    assert r.returncode == 1, out[-3000:]
    assert "5 root tests run beside the others by a second pytest" in out
    assert "2 failed, 3 passed, 1 skipped, 1 error" in out
    for name, outcome in (("test_here_passes", "PASSED"), ("test_here_fails", "FAILED"),
                          ("test_root_passes", "PASSED"), ("test_root_fails", "FAILED"),
                          ("test_root_skips", "SKIPPED"), ("test_root_setup_errors", "ERROR"),
                          ("test_root_tolerant_passes", "PASSED")):
        lines = [ln for ln in out.splitlines() if ln.startswith(f"tests/data/split/inner.py::{name} ")]
        assert len(lines) == 1 and outcome in lines[0], (name, lines)  # once, as it ended
    assert "{'ran in': 'worker'} == {'ran in': 'nowhere'}" in out  # the worker's failure, its assertion shown
    assert "RuntimeError: setup broke in worker" in out and "skipped in worker" in out
    assert "ran in worker" in out  # the worker's captured output
    assert "call     tests/data/split/inner.py::test_root_passes" in out  # its duration
    assert "ran in main" in out  # and this process's own


def test_serial_runs_everything_here(as_root, tmp_path):
    r = inner(tmp_path, HARNESS_TESTS_SERIAL="1")
    assert r.returncode == 1 and "2 failed, 3 passed, 1 skipped, 1 error" in r.stdout, r.stdout[-3000:]
    assert "second pytest" not in r.stdout and "in worker" not in r.stdout
