"""The package's edges (issue 42): the simulator without the testbed's dependencies, a lock for
every range, and one line naming the extra when a testbed command lacks it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib

from tests.conftest import REPO

TESTBED = ("ansible", "ansible_runner", "kubernetes", "locust", "prometheus_api_client", "prometheus_client",
           "fnfqueue", "aiohttp")

# a Python that cannot import the testbed's packages, as after pip install harness-bench[sim]
HIDE = f'''
import importlib.abc, sys
class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in {TESTBED!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Hide())
'''


def without_testbed(tmp_path, *args: str) -> subprocess.CompletedProcess:
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(HIDE)
    env = {**os.environ, "PYTHONPATH": f"{site}{os.pathsep}{REPO}"}
    return subprocess.run([sys.executable, *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)


def test_the_simulator_runs_without_the_testbeds_packages(tmp_path):
    r = without_testbed(tmp_path, "-c", "import ansible_runner")
    assert r.returncode != 0  # the hiding works
    r = without_testbed(tmp_path, "-m", "harness", "validate", str(REPO / "workloads/chain.json"))
    assert r.returncode == 0, r.stderr
    r = without_testbed(tmp_path, "-m", "harness", "evaluate", "node-failure", "--policy", "default,cloud-first",
                        "--seeds", "1", "--out", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    assert "cloud-first" in r.stdout and list((tmp_path / "out").iterdir())
    session = next((tmp_path / "out").iterdir())
    r = without_testbed(tmp_path, "-m", "harness", "report", str(session))
    assert r.returncode == 0 and (session / "report" / "report.html").exists(), r.stderr
    r = without_testbed(tmp_path, "-c", "import gymnasium; e = gymnasium.make('harness.sim.ceenv:harness/CEEnv-v0'); "
                                        "print(type(e.unwrapped).__name__)")
    assert r.returncode == 0 and r.stdout.strip() == "CEEnv", r.stderr


def test_a_testbed_command_without_the_extra_is_one_line_naming_it(tmp_path):
    r = without_testbed(tmp_path, "-m", "harness", "provision")
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [r.stderr.strip()] and "pip install 'harness-bench[testbed]'" in r.stderr
    assert not (tmp_path / ".harness").exists()  # nothing begun


def _name(req: str) -> str:
    return re.split(r"[<>=!~\[; ]", req, maxsplit=1)[0].lower().replace("_", "-")


def test_the_core_leaves_the_testbed_out_and_constraints_pin_every_dependency():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    core = {_name(r) for r in project["dependencies"]}
    testbed = {_name(r) for r in project["optional-dependencies"]["testbed"]}
    assert not core & testbed and {"ansible-core", "kubernetes", "locust"} <= testbed
    pinned = {_name(line) for line in (REPO / "constraints.txt").read_text().splitlines()
              if line and not line.startswith("#")}
    wanted = core | {_name(r) for extra in project["optional-dependencies"].values() for r in extra}
    wanted -= {project["name"], "openstacksdk"}  # the k3s extra's OpenStack client is not installed for the tests
    assert wanted <= pinned, wanted - pinned
