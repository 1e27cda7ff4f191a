"""What harness prints survives a pipe or a log: no table cut to 80 columns with "…", and -h is --help."""

from __future__ import annotations

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
