"""The one catalog of every policy: each once under a unique name, in its world, with what it does;
a command of the one ground refuses another world's policy in one line naming where it runs."""

import json
import subprocess
import sys

import pytest

from harness.errors import UserError
from harness.policies import REGISTRY, resolve, world_learners
from harness.policies.catalog import WORLDS, entries


def test_every_policy_once_under_a_unique_name():
    es = entries()
    names = [e.name for e in es]
    assert len(names) == len(set(names))
    worlds = {e.world for e in es}
    assert worlds == set(WORLDS)
    by = {(e.word, e.world): e for e in es}
    assert set(REGISTRY) == {w for w, world in by if world == "cluster"}  # the one ground's registry, all of it
    assert {n for n in world_learners.names()} <= {w for w, world in by if world != "cluster"}
    # a word two worlds use is qualified outside the one ground; the one ground's stays bare
    assert by[("rollout", "cluster")].name == "rollout" and by[("rollout", "servicegraph")].name == "rollout@servicegraph"
    assert by[("random", "servicegraph")].name == "random@servicegraph"
    assert by[("sil-gpo", "servicegraph")].name == "sil-gpo" and "train" in by[("sil-gpo", "servicegraph")].abilities
    assert by[("reach", "cluster")].family == "reach" and by[("default", "cluster")].family == "harness"
    assert any(m.endswith("reach-chain.pt") for m in by[("reach", "cluster")].models)


def test_a_policy_of_another_world_is_refused_in_one_line():
    with pytest.raises(UserError) as err:
        resolve("sil-gpo")
    assert "servicegraph" in str(err.value) and "harness train" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(UserError, match="multicluster"):
        resolve("spread-bf1b1")
    with pytest.raises(UserError, match="harness policies"):
        resolve("no-such-policy")
    assert resolve("rollout@cluster") is REGISTRY["rollout"]


def test_harness_policies_lists_them_as_json():
    r = subprocess.run([sys.executable, "-m", "harness", "policies", "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)
    assert len(rows) == len(entries()) and {"name", "world", "abilities", "family", "summary", "models"} <= set(rows[0])
    r = subprocess.run([sys.executable, "-m", "harness", "policies", "--world", "moon"], capture_output=True, text=True)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
