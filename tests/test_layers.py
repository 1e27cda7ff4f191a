"""The layers point one way (pyproject.toml's import-linter contracts), lazy imports included."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

LINT = Path(sys.executable).with_name("lint-imports")


def lint(root: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([str(LINT), "--config", str(root / "pyproject.toml"), "--no-cache"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=120)


def test_the_contracts_hold():
    r = lint(REPO)
    assert r.returncode == 0, r.stdout[-3000:]
    assert "0 broken" in r.stdout


def copy_tree(tmp_path: Path) -> Path:
    """A copy of the tool, the lab and the contracts, to break on purpose."""
    for package in ("harness", "studies", "benchmarks"):
        shutil.copytree(REPO / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_a_wrong_way_lazy_import_breaks_the_contract(tmp_path):
    """A copy of the package whose simulator imports the policies inside a function."""
    root = copy_tree(tmp_path)
    with open(root / "harness/sim/latency.py", "a") as f:
        f.write("\n\ndef _sneaky():\n    from harness.policies import build  # noqa: F401\n")
    r = lint(root)
    assert r.returncode != 0
    assert "harness.sim.latency -> harness.policies" in r.stdout


def test_the_tool_importing_the_lab_breaks_the_contract(tmp_path):
    """harness never imports studies: a report that reached for a study's helper is refused."""
    root = copy_tree(tmp_path)
    with open(root / "harness/results/report.py", "a") as f:
        f.write("\n\ndef _from_the_lab():\n    from studies.common import verdict  # noqa: F401\n")
    r = lint(root)
    assert r.returncode != 0
    assert "the tool never imports the lab" in r.stdout and "BROKEN" in r.stdout
    assert "harness.results.report -> studies.common" in r.stdout
