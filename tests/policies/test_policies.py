import itertools

import numpy as np
import pytest

from harness.errors import UserError
from harness.policies import REGISTRY, build, check_declaration, names, placer_for
from harness.policies.contract import Ability, Move, Policy
from harness.families.reach.reach import Reach, ReachArgs
from harness.rescheduler.evaluate import SimWorld, run_policy, scenario, slots_for
from harness.rl.acting import save_model
from harness.sim.ceenv import Dynamics, EnvConfig, default_model

BUILTIN = ["bef", "binpack-greedy", "cf", "cloud-first", "cost-delay-milp", "cpu-greedy", "default", "ds-dqn", "ds-ppo",
           "greedy-bestfit", "hf-latency-greedy", "k8s-edge", "karmada-greedy", "kubedsm", "latency-greedy", "optimal",
           "random", "reach", "rollout", "rsdql", "sb3", "sef", "spread-ffd", "torch"]


@pytest.fixture(scope="module")
def dyn():
    return Dynamics(default_model(None, None), EnvConfig())


def placed(dyn, name, pods, seed=0):
    world = SimWorld(dyn, scenario(dyn, pods, seed))
    world.place(build(name), slots_for(dyn, pods))
    return world


def test_every_policy_declares_what_it_does():
    """Declared abilities, not probing: placers place, reschedulers plan and name their placer,
    learned ones train; the registry refuses a class whose declaration and methods disagree."""
    assert names() == BUILTIN
    expect = {"default": {"place"}, "cloud-first": {"place"}, "latency-greedy": {"place"}, "optimal": {"plan"},
              "reach": {"plan", "train"}, "rsdql": {"plan", "train"}, "rollout": {"place", "plan"},
              "kubedsm": {"place", "plan"}, "sb3": {"plan"}, "torch": {"plan"}} | \
        dict.fromkeys(("bef", "cf", "k8s-edge", "random", "sef", "greedy-bestfit", "cost-delay-milp", "cpu-greedy",
                       "binpack-greedy", "hf-latency-greedy", "karmada-greedy", "spread-ffd", "ds-ppo", "ds-dqn"), {"place"})
    for name, cls in REGISTRY.items():
        assert {a.value for a in cls.abilities} == expect[name], name
        if Ability.PLACE not in cls.abilities:
            assert cls.placed_by in REGISTRY and Ability.PLACE in REGISTRY[cls.placed_by].abilities
    assert placer_for(build("optimal")).name == "default"
    assert placer_for(build("cloud-first")).name == "cloud-first"
    assert placer_for(build("rollout")).name == "rollout"  # it places its own pods

    class SaysPlanDoesNot(Policy):
        name, Args, abilities = "liar", ReachArgs, frozenset({Ability.PLAN})

    with pytest.raises(UserError, match="declares 'plan' but does not implement it"):
        check_declaration(SaysPlanDoesNot)


def test_registry_errors_are_one_line_user_errors():
    for n in ("reach", "rsdql"):
        with pytest.raises(UserError, match="harness train"):
            build(n)
    with pytest.raises(UserError, match="unknown policy 'nope'"):
        build("nope")
    with pytest.raises(UserError, match="has no argument"):
        build("default", colour=1)
    with pytest.raises(UserError, match="max_placements and chunk must be ≥ 1"):  # validate() -> user error
        build("optimal", chunk=0)


def tiers_of(dyn, st):
    return [dyn.model.topo.tiers[n] for n in st.node[0] if n >= 0]


def test_heuristics_place_where_they_say(dyn):
    for name, expect in (("cloud-first", {"cloud"}), ("latency-greedy", {"edge"})):
        assert set(tiers_of(dyn, placed(dyn, name, 4).st)) == expect, name
    st = placed(dyn, "default", 8).st
    for s in range(dyn.S):  # two replicas of a service spread over two nodes
        nodes = st.node[0][dyn.slot_service == s]
        nodes = nodes[nodes >= 0]
        assert len(set(nodes)) == 2


def test_a_batch_the_cluster_cannot_hold_leaves_pods_pending(dyn):
    world = SimWorld(dyn, scenario(dyn, 4, seed=0))
    view = world.view()
    huge = view.pending("db")
    huge = type(huge)("db", cpu=float(view.cap_cpu.max()) + 1, memory_mib=1.0, name="db#big")
    for name in ("default", "cloud-first", "latency-greedy", "bef", "sef", "cf", "k8s-edge", "random"):
        assert build(name).place(view, [view.pending("db", "db#1"), huge])[1] is None, name


def test_optimal_equals_brute_force_on_a_tiny_instance(dyn):
    st = placed(dyn, "default", 4, seed=3).st
    assign, best = build("optimal").solve(dyn, st, 0)
    brute = min(dyn.model.latency(np.eye(dyn.N)[list(c)][None])[0] for c in itertools.product(range(dyn.N), repeat=4))
    assert best == pytest.approx(brute)  # 4 pods of 0.5 cores always fit: no capacity cut here


def test_reach_learns_saves_and_reloads_identically(tmp_path, dyn):
    args = ReachArgs(total_steps=40_000, seed=3)
    agent, curve = Reach.train(dyn, args)
    assert curve[-1][1] > curve[0][1]  # it learns something in 20k steps
    path = tmp_path / "reach-chain.pt"
    save_model(agent, Reach.metadata(dyn, args, "chain", "p", "t", curve), path)
    a, b = Reach.load(path), build("reach", model=str(path))
    r1 = run_policy(dyn, a, "reach", 12, [0, 1, 2])
    r2 = run_policy(dyn, b, "reach", 12, [0, 1, 2])
    assert r1 == r2
    start = run_policy(dyn, build("default"), "default", 12, [0, 1, 2])
    assert r1.latency_ms < start.latency_ms  # its moves improve on the placement it starts from
    assert a.meta["env_version"] == "CEEnv-v0" and a.meta["seed"] == 3


def test_a_model_from_another_env_version_is_refused(tmp_path, dyn):
    args = ReachArgs(total_steps=1024, num_envs=16, num_steps=64)
    agent, curve = Reach.train(dyn, args)
    meta = Reach.metadata(dyn, args, "chain", "p", "t", curve) | {"env_version": "CEEnv-v9"}
    save_model(agent, meta, tmp_path / "old.pt")
    with pytest.raises(UserError, match="trained in CEEnv-v9"):
        build("reach", model=str(tmp_path / "old.pt"))


def test_a_model_trained_under_load_sees_the_views_rate(tmp_path):
    """A model trained with --load keeps its load range in its metadata; acting, it sees the view's
    rate (0 when unknown) and the queueing model's latency at that rate, as in training."""
    from dataclasses import replace

    from harness.sim.queueing import QueueingModel

    loaded = Dynamics(default_model(None, None), EnvConfig(load=(0.0, 8.0)))
    args = ReachArgs(total_steps=1024, num_envs=16, num_steps=64)
    agent, curve = Reach.train(loaded, args)
    save_model(agent, Reach.metadata(loaded, args, "chain", "p", "t", curve), tmp_path / "loaded.pt")
    policy = build("reach", model=str(tmp_path / "loaded.pt"))
    world = SimWorld(loaded, scenario(loaded, 12, 0))
    world.place(build("default"), slots_for(loaded, 12))
    view = world.view()
    policy.check(view)  # its observation has the rate feature: the sizes agree
    for rate in (None, 2.0, 4.0):
        dyn, st, _ = policy.state(replace(view, rate=rate))
        obs = dyn.observe(st)[0]
        assert obs[-1] == pytest.approx((rate or 0.0) / 8.0)
        want = QueueingModel(loaded.model).latency(view.counts(), rate) if rate else view.latency_ms()
        assert obs[-2] == pytest.approx(want / 1000, rel=1e-6)
        assert isinstance(policy.plan(replace(view, rate=rate)), list)


def test_rsdql_learns_saves_and_reloads_identically(tmp_path, dyn):
    from harness.families.reach.rsdql import Rsdql, RsdqlArgs

    q, curve = Rsdql.train(dyn, RsdqlArgs(total_steps=30_000, seed=2))
    returns = [row[1] for row in curve]
    quarter = len(returns) // 4  # the last points against the first: one point of a short run is noisy
    assert np.mean(returns[-quarter:]) > np.mean(returns[:quarter]) + 10
    path = tmp_path / "rsdql-chain.pt"
    save_model(q, Rsdql.metadata(dyn, RsdqlArgs(seed=2), "chain", "p", "t", curve), path)
    a, b = build("rsdql", model=str(path)), build("rsdql", model=str(path))
    assert run_policy(dyn, a, "rsdql", 12, [0, 1]) == run_policy(dyn, b, "rsdql", 12, [0, 1])
    assert a.meta["policy"] == "rsdql" and a.meta["args"]["exploration_fraction"] == 0.1


def test_rsdql_unmasked_takes_invalid_actions_in_training_and_makes_no_move_of_one(tmp_path, dyn):
    """The paper's DQN has no mask: in training it takes invalid actions (CEEnv ends the episode
    with -100); acting, a model so trained that scores an invalid action highest makes no move,
    where the masked one takes the valid action scored highest."""
    import torch

    from harness.families.reach.rsdql import Rsdql, RsdqlArgs

    _, unmasked = Rsdql.train(dyn, RsdqlArgs(total_steps=6_000, seed=2, unmasked=True))
    _, masked = Rsdql.train(dyn, RsdqlArgs(total_steps=6_000, seed=2))
    assert unmasked[0][1] < -50 < masked[0][1]  # exploring every action: most are invalid
    q, curve = Rsdql.train(dyn, RsdqlArgs(total_steps=2_000, seed=2, unmasked=True))
    for name, args in (("u", RsdqlArgs(seed=2, unmasked=True)), ("m", RsdqlArgs(seed=2))):
        save_model(q, Rsdql.metadata(dyn, args, "chain", "p", "t", curve), tmp_path / f"{name}.pt")
    world = SimWorld(dyn, scenario(dyn, 12, 0))
    world.place(build("default"), slots_for(dyn, 12))
    view = world.view()
    policy = build("rsdql", model=str(tmp_path / "u.pt"))
    d, st, _ = policy.state(view)
    mask = d.masks(st).reshape(-1)
    invalid, valid = int(np.flatnonzero(~mask)[0]), int(np.flatnonzero(mask[:-1])[0])  # the last action is Idle
    scores = torch.zeros(1, mask.size)
    scores[0, invalid], scores[0, valid] = 10.0, 5.0
    for name, want in (("u", []), ("m", "a move")):
        policy = build("rsdql", model=str(tmp_path / f"{name}.pt"))
        policy.net = lambda obs: scores
        moves = policy.plan(view)
        assert moves == [] if want == [] else len(moves) == 1


def test_optimal_plan_reaches_the_optimum_it_found(dyn):
    opt = build("optimal")
    world = placed(dyn, "default", 8, seed=1)
    _, best = opt.solve(dyn, world.st, 0)
    view = world.view()
    plan = opt.plan(view)
    assert plan and all(isinstance(m, Move) for m in plan)
    for m in plan:
        view = view.after(m)
    assert view.latency_ms() == pytest.approx(best)
    assert opt.plan(view) == []  # at the placement its plan leads to, it is idle without searching again


def test_evaluate_shows_reschedulers_the_latency_they_act_on(dyn):
    """The observation's last feature is the current latency, as in training and in the live loop."""
    from harness.policies.ceenv_state import to_ceenv
    from harness.policies.contract import NoArgs

    class Recorder(Policy):
        name, Args, abilities = "recorder", NoArgs, frozenset({Ability.PLAN})

        def __init__(self):
            super().__init__(NoArgs())
            self.seen = []

        def plan(self, view):
            d, st, names = to_ceenv(view)
            self.seen.append((float(d.observe(st)[0, -1]) * 1000, view.latency_ms()))
            if len(self.seen) > 3:
                return []
            slot = len(self.seen) * d.cfg.max_replicas  # one pod of each later service: no placement repeats
            node = int(np.flatnonzero(d.masks(st)[0, slot * d.N:(slot + 1) * d.N])[0])
            return [Move(names[slot], view.nodes[node].name)]

    rec = Recorder()
    run_policy(dyn, rec, "recorder", 12, [0])
    assert len(rec.seen) == 4
    for shown, actual in rec.seen:
        assert shown == pytest.approx(actual, rel=1e-5)


def test_a_recipe_sets_flags_the_user_may_override():
    from harness.policies.learned import training_config

    args, env = training_config(Reach, [], "committed")
    assert args.total_steps == 3_000_000 and env.large_share == 0.25 and env.failed_at_start == 0.5
    args, env = training_config(Reach, ["--total-steps", "2048", "--large-share", "0"], "committed")
    assert args.total_steps == 2048 and env.large_share == 0.0 and args.ent_coef == 0.01  # the rest of the recipe stays
    fast, _ = training_config(Reach, [], "fast")
    assert fast.minibatch > args.minibatch  # its batch shapes differ from Table V's
    loaded, env = training_config(Reach, [], "under-load")
    assert env.load == (1.0, 6.0) and env.load_kind == "closed" and loaded.total_steps == 6_000_000
    assert training_config(Reach, [])[0] == ReachArgs()  # no recipe: Table V's defaults
    quick, _ = training_config(Reach, [], "four-minute")
    assert (quick.total_steps, quick.minibatch, quick.learning_rate) == (3_000_000, 512, fast.learning_rate)
    with pytest.raises(UserError, match="no recipe 'quick'; it has: committed, fast, four-minute, under-load"):
        training_config(Reach, [], "quick")


def test_the_update_s_log_probabilities_are_the_masked_distribution_s():
    import torch

    from harness.rl.nets import masked_categorical, masked_log_softmax

    torch.manual_seed(0)
    logits, mask = torch.randn(64, 121), torch.rand(64, 121) > 0.6
    mask[:, -1] = True  # Idle
    dist, logp = masked_categorical(logits, mask), masked_log_softmax(logits, mask)
    actions = dist.sample()
    assert mask.gather(1, actions[:, None]).all()  # only valid actions are drawn
    assert torch.allclose(dist.log_prob(actions), logp.gather(1, actions[:, None]).squeeze(1), atol=1e-5)
    assert torch.allclose(dist.entropy(), -(logp.exp() * logp).sum(1), atol=1e-5)
