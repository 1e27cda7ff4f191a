import itertools

import numpy as np
import pytest

from harness.errors import UserError
from harness.policies import build, names
from harness.policies.reach import ReachArgs, load, metadata, save, train
from harness.sim.ceenv import Dynamics, EnvConfig, default_model
from harness.sim.evaluate import run_policy, scenario, slots_for


@pytest.fixture(scope="module")
def dyn():
    return Dynamics(default_model(None, None), EnvConfig())


def test_registry_builds_every_policy(tmp_path, dyn):
    assert names() == ["cloud-first", "default", "latency-greedy", "optimal", "reach", "rsdql"]
    for n in names():
        if n in ("reach", "rsdql"):
            with pytest.raises(UserError, match="harness train"):
                build(n)
            continue
        assert build(n) is not None
    with pytest.raises(UserError, match="unknown policy 'nope'"):
        build("nope")
    with pytest.raises(UserError, match="has no argument"):
        build("default", colour=1)


def tiers_of(dyn, st):
    return [dyn.model.topo.tiers[n] for n in st.node[0] if n >= 0]


def test_heuristics_place_where_they_say(dyn):
    for name, expect in (("cloud-first", {"cloud"}), ("latency-greedy", {"edge"})):
        st = scenario(dyn, 4, seed=0)
        build(name).place_all(dyn, st, 0, slots_for(dyn, 4))
        assert set(tiers_of(dyn, st)) == expect, name
    st = scenario(dyn, 8, seed=0)
    build("default").place_all(dyn, st, 0, slots_for(dyn, 8))
    for s in range(dyn.S):  # two replicas of a service spread over two nodes
        nodes = st.node[0][dyn.slot_service == s]
        nodes = nodes[nodes >= 0]
        assert len(set(nodes)) == 2


def test_optimal_equals_brute_force_on_a_tiny_instance(dyn):
    st = scenario(dyn, 4, seed=3)
    build("default").place_all(dyn, st, 0, slots_for(dyn, 4))
    assign, best = build("optimal").solve(dyn, st, 0)
    brute = min(dyn.model.latency(np.eye(dyn.N)[list(c)][None])[0] for c in itertools.product(range(dyn.N), repeat=4))
    assert best == pytest.approx(brute)  # 4 pods of 0.5 cores always fit: no capacity cut here


def test_reach_learns_saves_and_reloads_identically(tmp_path, dyn):
    agent, curve = train(dyn, ReachArgs(total_steps=40_000, seed=3))
    assert curve[-1][1] > curve[0][1]  # it learns something in 20k steps
    path = tmp_path / "reach-chain.pt"
    save(agent, metadata(dyn, ReachArgs(total_steps=40_000, seed=3), "chain", "p", "t", curve), path)
    a, b = load(path), load(path)
    r1 = run_policy(dyn, a, "reach", 12, [0, 1, 2])
    r2 = run_policy(dyn, b, "reach", 12, [0, 1, 2])
    assert r1 == r2
    start = run_policy(dyn, build("default"), "default", 12, [0, 1, 2])
    assert r1.latency_ms < start.latency_ms  # its moves improve on the placement it starts from
    assert a.meta["env_version"] == "CEEnv-v0" and a.meta["seed"] == 3


def test_rsdql_learns_saves_and_reloads_identically(tmp_path, dyn):
    from harness.policies import rsdql

    q, curve = rsdql.train(dyn, rsdql.RsdqlArgs(total_steps=30_000, seed=2))
    assert curve[-1][1] > curve[0][1]
    path = tmp_path / "rsdql-chain.pt"
    rsdql.save(q, rsdql.metadata(dyn, rsdql.RsdqlArgs(seed=2), "chain", "p", "t", curve), path)
    a, b = build("rsdql", model=str(path)), build("rsdql", model=str(path))
    assert run_policy(dyn, a, "rsdql", 12, [0, 1]) == run_policy(dyn, b, "rsdql", 12, [0, 1])
    assert a.meta["policy"] == "rsdql" and a.meta["args"]["exploration_fraction"] == 0.1


def test_optimal_moves_reach_the_optimum_it_found(dyn):
    opt = build("optimal")
    st = scenario(dyn, 8, seed=1)
    build("default").place_all(dyn, st, 0, slots_for(dyn, 8))
    _, best = opt.solve(dyn, st, 0)
    for _ in range(20):
        move = opt.next_move(dyn, st, 0)
        if move is None:
            break
        st.node[0, move[0]] = move[1]
    assert dyn.latency(st)[0] == pytest.approx(best)


def test_evaluate_shows_reschedulers_the_latency_they_act_on(dyn):
    """The observation's last feature is the current latency, as in training and in the live loop."""

    class Recorder:
        moves = True

        def __init__(self):
            self.seen = []

        def next_move(self, dyn, st, b):
            self.seen.append((float(dyn.observe(st)[b, -1]) * 1000, float(dyn.latency(st)[b])))
            if len(self.seen) > 3:
                return None
            slot = len(self.seen) * dyn.cfg.max_replicas  # one pod of each later service: no placement repeats
            return slot, int(np.flatnonzero(dyn.masks(st)[b, slot * dyn.N:(slot + 1) * dyn.N])[0])

    rec = Recorder()
    run_policy(dyn, rec, "recorder", 12, [0])
    assert len(rec.seen) == 4
    for shown, actual in rec.seen:
        assert shown == pytest.approx(actual, rel=1e-5)
