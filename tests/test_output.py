"""What harness prints survives a pipe or a log: no table cut to 80 columns with "…", and -h is --help."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import REPO

WIDE = """
from rich.table import Table
from harness.cli.output import console
t = Table(title="comparison")
for k in range(9):
    t.add_column(f"policy-{k} r{k}", justify="right")
t.add_row(*[f"{123.456 + k:.3f} ms (node cloud-a-1, 10.230.0.{k})" for k in range(9)])
console().print(t)
"""


def test_a_wide_table_into_a_pipe_keeps_every_number():
    r = subprocess.run([sys.executable, "-c", WIDE], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert r.returncode == 0, r.stderr
    assert "…" not in r.stdout
    for k in range(9):
        assert f"{123.456 + k:.3f} ms (node cloud-a-1, 10.230.0.{k})" in r.stdout


def test_dash_h_is_help():
    r = subprocess.run([sys.executable, "-m", "harness", "evaluate", "-h"], capture_output=True, text=True, timeout=60,
                       cwd=REPO)
    assert r.returncode == 0 and "Policies compared in simulation" in r.stdout


def test_help_of_a_testbed_command_needs_no_testbed_extra():
    """`harness run --help` (and -h) reads only: it works with the core install, where the same
    command without --help says which extra it needs."""
    code = ("import importlib.util, sys\n"
            "real = importlib.util.find_spec\n"
            "importlib.util.find_spec = lambda name, *a: None if name.split('.')[0] in "
            "('locust', 'kubernetes', 'ansible_runner', 'fnfqueue', 'prometheus_api_client') else real(name, *a)\n"
            "from harness.cli.main import main\n"
            "sys.exit(main(sys.argv[1:]))\n")
    for args in (["run", "--help"], ["run", "-h"], ["provision", "--help"], ["train", "-h"]):
        r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True)
        assert r.returncode == 0 and "Usage:" in r.stdout and f"{args[0]} [OPTIONS]" in r.stdout, (args, r.stderr)
    r = subprocess.run([sys.executable, "-c", code, "run", "node-failure"], capture_output=True, text=True)
    assert r.returncode == 2 and "harness-bench[testbed]" in r.stderr


def test_shell_completion_is_typers_own():
    from pathlib import Path

    harness = Path(sys.executable).parent / "harness"  # the installed command, as a user types it
    # the shell named, not detected: detection walks up to the nearest shell process, and a run
    # with none above it (a detached job) printed "Shell  not supported" (Typer's own tests do so)
    env = {**os.environ, "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}
    r = subprocess.run([str(harness), "--show-completion", "bash"], capture_output=True, text=True, env=env)
    assert r.returncode == 0 and "_harness_completion" in r.stdout and "complete " in r.stdout
