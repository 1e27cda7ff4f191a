"""μBench's placement constraints (node_affinity, pod_antiaffinity) are honoured by every
registered policy, in simulation (CEEnv's masks, the heuristics' filters, the move loop) and live
(deployment, self-healing, moves)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import yaml

from harness.errors import UserError
from harness.policies import REGISTRY, build, names
from harness.policies.contract import Ability, Move
from harness.rescheduler.evaluate import SimWorld, run_policy, scenario, slots_for
from harness.sim.ceenv import CEEnvVector, Dynamics, EnvConfig
from harness.sim.topology import model_for
from harness.spec.app import load_app
from harness.spec.placement import check_placement
from harness.spec.profile import load_profile
from tests.conftest import REPO

CONSTRAINTS = {"front-end": {"pod_antiaffinity": True},
               "ml": {"pod_antiaffinity": True, "node_affinity": ["cloud-a-1", "cloud-a-2", "edge-a-1"]},
               "db": {"node_affinity": ["edge-a-1", "edge-a-2"]}}


def constrained_app(tmp_path, name="chain-constrained"):
    doc = json.loads((REPO / "workloads/chain.json").read_text())
    doc["name"] = name
    for service, extra in CONSTRAINTS.items():
        doc["services"][service].update(extra)
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.fixture(scope="module")
def app_file(tmp_path_factory):
    return constrained_app(tmp_path_factory.mktemp("app"))


@pytest.fixture(scope="module")
def dyn(app_file):
    app = load_app(app_file)
    return Dynamics(model_for(app, load_profile(REPO / "profiles/chain.reach-local.json")), EnvConfig())


@pytest.fixture(scope="module")
def models(app_file, tmp_path_factory):
    """Briefly trained models of the learned policies on the constrained app (enough to act)."""
    out = tmp_path_factory.mktemp("models")
    for name in (n for n in names() if Ability.TRAIN in REGISTRY[n].abilities):
        r = subprocess.run([sys.executable, "-m", "harness", "train", "--app", str(app_file), "--profile",
                            "profiles/chain.reach-local.json", "--policy", name, "--steps", "2048", "--out", str(out),
                            "--name", f"{name}-chain-constrained"], cwd=REPO, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
    return out


def test_the_constraints_are_read_from_the_workmodel(app_file):
    app = load_app(app_file)
    assert app.spreads("front-end") and not app.spreads("db")
    assert app.may_run_on("db", "edge-a-2") and not app.may_run_on("db", "cloud-a-1") and app.may_run_on("back-end", "x")


def test_a_placement_file_that_breaks_them_names_the_field(app_file, tmp_path):
    app = load_app(app_file)
    nodes = ["cloud-a-1", "cloud-a-2", "edge-a-1", "edge-a-2"]
    ok = {"front-end": ["edge-a-1"], "ml": ["cloud-a-1"], "back-end": ["cloud-a-1"], "db": ["edge-a-2"]}
    check_placement(ok, app, nodes, "p.yaml")
    with pytest.raises(UserError, match=r"p\.yaml: db\[0\]: cloud-a-1 is not in db's node_affinity"):
        check_placement(ok | {"db": ["cloud-a-1"]}, app, nodes, "p.yaml")
    with pytest.raises(UserError, match=r"p\.yaml: front-end: front-end has pod_antiaffinity"):
        check_placement(ok | {"front-end": ["edge-a-1", "edge-a-1"]}, app, nodes, "p.yaml")


def test_an_unknown_node_or_an_unsatisfiable_spread_is_refused(app_file):
    app = load_app(app_file)
    with pytest.raises(UserError, match=r"ml\.node_affinity\[2\]: unknown node 'edge-a-1'"):
        app.check_nodes(["cloud-a-1", "cloud-a-2", "edge-b-1"], "a.json")
    crowded = app.model_copy(update={"services": app.services | {"ml": app.services["ml"].model_copy(update={"replicas": 4})}})
    with pytest.raises(UserError, match=r"ml\.pod_antiaffinity: 4 replicas with pod_antiaffinity need 4 nodes; only 3"):
        crowded.check_nodes(["cloud-a-1", "cloud-a-2", "edge-a-1", "edge-a-2", "edge-b-1"], "a.json")


def test_ceenv_masks_keep_random_play_within_the_constraints(dyn):
    batch = CEEnvVector(16, dyn=dyn)
    _, info = batch.reset(seed=0)
    rng = np.random.default_rng(0)
    app, nodes = dyn.model.app, dyn.model.topo.nodes
    for _ in range(150):
        _, _, _, _, info = batch.step(np.array([rng.choice(np.flatnonzero(m)) for m in info["action_mask"]]))
        for b in range(16):
            placement = {}
            for slot in np.flatnonzero(batch.st.node[b] >= 0):
                placement.setdefault(dyn.model.services[dyn.slot_service[slot]], []).append(nodes[batch.st.node[b, slot]])
            assert app.constraint_problem(placement) is None, placement


def test_the_move_loop_refuses_a_move_that_breaks_them(dyn):
    world = SimWorld(dyn, scenario(dyn, 8, 0))
    world.place(build("default"), slots_for(dyn, 8))
    view = world.view()
    db = view.pods_of("db")[0]
    fe = view.pods_of("front-end")
    assert not view.valid(Move(db.name, "cloud-a-1"))  # affinity
    assert not view.valid(Move(fe[0].name, fe[1].node))  # anti-affinity


def test_every_registered_policy_respects_them_in_evaluate(dyn, models):
    from harness.spec.inventory import load_inventory

    testbed = load_inventory(None)  # REACH's, which dyn models
    for name in names():
        if getattr(REGISTRY[name], "acts_with_a_users_file", False):  # sb3: tests/policies/test_sb3.py plays an agent
            continue
        if REGISTRY[name].unfit(dyn.model.app) is not None or REGISTRY[name].unfit_testbed(testbed) is not None:
            continue  # another problem's placer (cost-delay-milp: paper 003's; HephaestusForge's need sites)
        kw = {"model": str(models / f"{name}-chain-constrained.pt")} if Ability.TRAIN in REGISTRY[name].abilities else {}
        finals: list = []
        r = run_policy(dyn, build(name, **kw), name, 8, [0, 1, 2], finals=finals)
        assert r is not None and len(finals) == 3, name
        for placement in finals:
            assert dyn.model.app.constraint_problem(placement) is None, (name, placement)
            assert all(len(v) == 2 for v in placement.values()), (name, placement)


def one_per_ability_set() -> list[str]:
    """A policy for each combination of abilities: live, a policy reaches the testbed only through
    the path its abilities select (place at deployment and self-healing, plan through the move
    loop), so these cover every live path. Each policy's own rules are checked against every
    registered policy in simulation above, through the same place and plan code."""
    seen: dict[frozenset, str] = {}
    for name in names():
        seen.setdefault(REGISTRY[name].abilities, name)
    return sorted(seen.values())


SCENARIO = {"name": "constrained", "description": "constraints under a node failure", "duration_s": 10,
            "app": None, "replicas": 2, "warmup_s": 1,
            "faults": [{"at_s": 4, "kind": "node-failure", "nodes": ["edge-a-1"]}],
            "rescheduler": {"period_s": 2, "start_s": 1, "max_moves": 6}}


@pytest.mark.root
@pytest.mark.slow
@pytest.mark.load_tolerant
@pytest.mark.timeout(900)  # one short run per policy, as the subprocess's own limit
def test_each_live_path_respects_them(local_testbed, app_file, models, tmp_path):
    """Deployment, self-healing after edge-a-1 fails, and every move: no placement ever held breaks
    a constraint, on each live path (one policy per combination of abilities)."""
    policies = one_per_ability_set()
    from tests.scenarios.test_live import harness

    sc = tmp_path / "sc.yaml"
    sc.write_text(yaml.safe_dump(SCENARIO | {"app": str(app_file)}))
    r = harness(local_testbed.state_dir, "run", str(sc), "--policy", ",".join(policies), "--model-dir", str(models),
                "--profile", "profiles/chain.reach-local.json", "--out", str(tmp_path / "results"), "--seed", "1",
                timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    app = load_app(app_file)
    for name in policies:
        (run,) = (tmp_path / "results").glob(f"*/{name}-s1")
        held = [json.loads(line) for line in (run / "placements.jsonl").read_text().splitlines()]
        failed_at = next(i for i, p in enumerate(held) if p["reason"] == "node-failure")
        hit = any("edge-a-1" in nodes for nodes in held[failed_at - 1]["placement"].values())
        assert not hit or any(p["reason"] == "self-healing" for p in held), name  # its lost pods placed again
        for p in held:
            assert app.constraint_problem(p["placement"]) is None, (name, p)
        assert "edge-a-1" not in held[-1]["placement"]["db"], name
        s = json.loads((run / "summary.json").read_text())
        assert s["recovery_s"] is not None, name
    assert local_testbed.cluster.pods() == []
