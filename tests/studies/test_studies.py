"""The lab's scripts stay runnable from their place: every study and benchmark module imports (so
a change in harness's API that breaks one fails here, not in a reproduction months later), has a
main, and a study given a folder it cannot read says so in one line with exit status 2."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import pytest

import benchmarks
import studies
from tests.conftest import REPO


def modules(package) -> list[str]:
    return [m.name for m in pkgutil.walk_packages(package.__path__, package.__name__ + ".") if not m.ispkg]


SCRIPTS = [m for m in modules(studies) + modules(benchmarks)
           if m not in ("studies.common", "studies.fidelity.common", "studies.fidelity.judge", "studies.kubedsm.workloads", "studies.reliability.slow_policy",
                        "benchmarks.ceenv_numpy", "benchmarks.http_echo")]


@pytest.mark.parametrize("name", SCRIPTS)
def test_every_script_imports_and_has_a_main(name):
    module = importlib.import_module(name)
    assert callable(getattr(module, "main", None)), f"{name} has no main()"
    assert module.__doc__ and module.__doc__.strip(), f"{name} has no docstring for its --help"


def test_scripts_run_as_modules_from_the_repository_root():
    r = subprocess.run([sys.executable, "-m", "studies.reach.quality", "--help"], cwd=REPO, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "--model-dir" in r.stdout


def test_reread_of_a_folder_that_is_no_open_loop_session_is_one_line(tmp_path):
    r = subprocess.run([sys.executable, "-m", "studies.fidelity.reread", str(tmp_path)], cwd=REPO,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0 and "not a studies.fidelity.open_loop output" in r.stderr


def test_the_scale_tracks_files_are_what_their_generator_writes_now():
    """``scenarios/scale/`` is ``studies.scale.continua``'s output: a change to a generator that
    moves them fails here (regenerate, and bump leaderboards/scale.yaml's version)."""
    from studies.scale.continua import stale

    assert stale() == []
