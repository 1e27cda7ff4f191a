"""The package's edges (issue 42): the simulator without the testbed's dependencies, a lock for
every range, and one line naming the extra when a testbed command lacks it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

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


def test_a_wheel_installed_outside_the_checkout_carries_its_data_and_registers_its_env(tmp_path):
    """The wheel, built from the repository, in a fresh virtualenv whose only other packages are
    the core's (the testbed's hidden): the shipped apps, scenarios and profiles are found from
    another folder, and gymnasium.make knows harness's env with nothing of harness imported."""
    import sysconfig
    import zipfile

    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                    str(tmp_path / "dist"), str(REPO)], check=True, capture_output=True, timeout=300, cwd=tmp_path)
    wheel = next((tmp_path / "dist").glob("harness_bench-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert {"harness-gymnasium.pth", "harness/_shipped/workloads/chain.json",
            "harness/_shipped/playbooks/local.yml", "harness/_shipped/manifests/service.yaml.j2"} <= set(names)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin/python"
    purelib = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    # the dependencies from this environment, as a plain path: its editable harness is not seen
    (Path(purelib) / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index",
                    str(wheel)], check=True, capture_output=True, timeout=300)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(HIDE)
    env = {**os.environ, "PYTHONPATH": str(site)}

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(python), *args], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=300)

    r = run("-c", "import harness, harness.shipped as s; print(harness.__file__); print(s.ROOT)")
    assert r.returncode == 0, r.stderr
    where, root = r.stdout.split()
    assert where.startswith(str(venv)) and root.endswith("harness/_shipped")
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    r = run("-c", "import harness.shipped as s; print(s.commit())")  # provenance from a wheel: the commit built
    assert r.returncode == 0 and r.stdout.strip() == head, (r.stdout, r.stderr)
    r = run("-c", "import gymnasium, sys; e = gymnasium.make('harness/CEEnv-v0'); "
                  "print(type(e.unwrapped).__name__, 'ansible_runner' in sys.modules)")
    assert r.returncode == 0 and r.stdout.split() == ["CEEnv", "False"], r.stderr
    r = run("-m", "harness", "validate", "chain")  # a shipped app by its name
    assert r.returncode == 0 and "app 'chain'" in r.stdout, r.stderr
    r = run("-m", "harness", "evaluate", "steady", "--policy", "default", "--seeds", "1", "--out", "out")
    assert r.returncode == 0, r.stderr
    assert list((elsewhere / "out").glob("*/*/summary.json"))
    # README.md's first result, as written there, from a folder outside the checkout
    readme = (REPO / "README.md").read_text()
    quick = readme.split("```sh\nmake setup\n", 1)[1].split("```", 1)[0].replace("\\\n", " ")
    words = quick.split()
    assert words[0] == ".venv/bin/harness", quick
    r = run("-m", "harness", *words[1:])
    assert r.returncode == 0 and "reach" in r.stdout and "rollout" in r.stdout, r.stderr
    r = run("-m", "harness", "evaluate", "node-failure", "--policy", "default", "--seeds", "1", "--profile",
            "chain.reach-local", "--out", "out2")
    assert r.returncode == 0, r.stderr
    r = run("-m", "harness", "validate", "workloads/chian.json")  # a path is the user's: the error names it
    assert r.returncode == 2 and "workloads/chian.json" in r.stderr and "_shipped" not in r.stderr
    r = run("-m", "harness", "provision")
    assert r.returncode == 2 and "harness-bench[testbed]" in r.stderr
