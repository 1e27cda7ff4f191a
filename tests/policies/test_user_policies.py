"""Policies of the user's own, in modules outside harness, found through the ``harness.policies``
entry point and as ``package.module:Class``, in ``harness sweep``, ``harness train`` and a short
live ``harness run`` — with no change to harness."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO

EXAMPLE = REPO / "docs/examples/harness_example_policy.py"
LEARNED = REPO / "tests/data/userpolicy/harness_tiny_learned.py"
ENTRY_POINTS = """[harness.policies]
greedy-mover = harness_example_policy:GreedyMover
tiny-reach = harness_tiny_learned:TinyReach
"""


@pytest.fixture(scope="module")
def user_site(tmp_path_factory) -> Path:
    """A folder on PYTHONPATH holding the two modules and an installed distribution's metadata
    (what pip writes): importlib.metadata finds its entry points there."""
    site = tmp_path_factory.mktemp("site")
    shutil.copy(EXAMPLE, site)
    shutil.copy(LEARNED, site)
    dist = site / "harness_user_policies-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: harness-user-policies\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(ENTRY_POINTS)
    return site


def harness(site: Path, *args, state_dir: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO)])}
    pre = ["--state-dir", str(state_dir)] if state_dir else []
    return subprocess.run([sys.executable, "-m", "harness", *pre, *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=timeout)


EVAL = ["sweep", "--app", "workloads/chain.json", "--profile", "profiles/chain.reach-local.json", "--pods", "4,8",
        "--seeds", "2"]


def rows(stdout: str) -> dict[tuple[str, int], list[str]]:
    out = {}
    for line in stdout.splitlines()[1:]:
        f = line.split()
        if len(f) >= 3 and f[1].isdigit():
            out[f[0], int(f[1])] = f[2:]
    return out


def test_the_policy_docs_show_the_example_policy_verbatim():
    assert EXAMPLE.read_text().strip() in (REPO / "docs/policies.md").read_text()


def test_found_through_the_entry_point_and_as_module_class_in_the_sweep(user_site):
    by_name = harness(user_site, *EVAL, "--policy", "greedy-mover,default")
    by_ref = harness(user_site, *EVAL, "--policy", "harness_example_policy:GreedyMover")
    for r in (by_name, by_ref):
        assert r.returncode == 0, r.stderr
    a, b = rows(by_name.stdout), rows(by_ref.stdout)
    assert a[("greedy-mover", 8)] == b[("greedy-mover", 8)]  # the same class either way
    # it places on the edge first, then moves while a move saves >= 1 ms: better than the default
    assert float(a[("greedy-mover", 8)][0]) < float(a[("default", 8)][0])
    assert float(a[("greedy-mover", 4)][1]) > 0  # and at 4 pods its plan() moved pods


def test_a_learned_policy_in_one_file_trains_names_its_model_and_evaluates(user_site, tmp_path):
    r = harness(user_site, "train", "--app", "workloads/chain.json", "--profile", "profiles/chain.reach-local.json",
                "--policy", "tiny-reach", "--steps", "2048", "--seed", "7", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    (model,) = tmp_path.glob("tiny-reach-chain-seed7-*.pt")
    meta = json.loads(model.with_suffix(".json").read_text())
    assert meta["policy"] == "tiny-reach" and meta["args"]["hidden"] == 16 and meta["seed"] == 7
    assert meta["name"] == model.stem and meta["trained_at"].endswith("Z")
    again = harness(user_site, "train", "--app", "workloads/chain.json", "--profile", "profiles/chain.reach-local.json",
                    "--policy", "tiny-reach", "--steps", "2048", "--out", str(tmp_path), "--name", model.stem)
    assert again.returncode == 2 and "--force" in again.stderr  # never silently replaced
    ev = harness(user_site, *EVAL, "--policy", "harness_tiny_learned:TinyReach", "--model-dir", str(tmp_path))
    assert ev.returncode == 0, ev.stderr
    assert ("tiny-reach", 4) in rows(ev.stdout)


def test_a_broken_reference_is_one_line(user_site):
    r = harness(user_site, *EVAL, "--policy", "harness_example_policy:NoSuchClass")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "NoSuchClass" in r.stderr


STEADY = {"name": "user-steady", "description": "a short steady run", "duration_s": 12, "app": "chain", "replicas": 2,
          "warmup_s": 2, "rescheduler": {"period_s": 5, "start_s": 2, "max_moves": 4}}


@pytest.mark.root
@pytest.mark.slow
@pytest.mark.load_tolerant
def test_a_user_policy_runs_live_by_either_name(local_testbed, user_site, tmp_path):
    sc = tmp_path / "steady.yaml"
    sc.write_text(yaml.safe_dump(STEADY))
    for ref in ("greedy-mover", "harness_example_policy:GreedyMover"):
        out = tmp_path / ref.replace(":", "_")
        r = harness(user_site, "run", str(sc), "--policy", ref, "--out", str(out), state_dir=local_testbed.state_dir)
        assert r.returncode == 0, r.stderr[-3000:]
        (run,) = out.glob("*/greedy-mover-s0")
        s = json.loads((run / "summary.json").read_text())
        assert s["policy"] == "greedy-mover" and s["requests"] > 20 and s["errors"] == 0
        deploy = next(json.loads(line) for line in (run / "placements.jsonl").read_text().splitlines())
        tiers = {n.name: n.tier for n in local_testbed.cluster.nodes}
        assert {tiers[n] for nodes in deploy["placement"].values() for n in nodes} == {"edge"}  # its own place()
    assert local_testbed.cluster.pods() == []
