"""SIL-GPO's learner: its parts against what they must compute, and a short training that runs."""

import numpy as np
import pytest
import torch

from harness.families.silgpo.agent import Curve, HighReturnBuffer, RewardScaling, SilGpoArgs, _update, deploy, train
from harness.families.silgpo.gat import SilGpoNet, collate, for_speed
from harness.families.silgpo.env import DeployEnv
from harness.families.silgpo.world import ServiceGraphConfig, delay, generate

SMALL = ServiceGraphConfig(requests=10, ai_requests=4)


def test_reward_scaling_divides_by_the_running_std_of_the_discounted_return():
    s = RewardScaling(0.9)
    assert s(2.0) == pytest.approx(1.0)  # one value: the code's std is that return itself
    returns = [2.0, 0.9 * 2.0 + 1.0]
    assert s(1.0) == pytest.approx(1.0 / np.std(returns))
    s.reset()  # a new episode: the return restarts, the statistics stay
    returns.append(3.0)
    assert s(3.0) == pytest.approx(3.0 / np.std(returns))


def test_the_high_return_buffer_admits_good_episodes_and_their_positive_steps():
    buf = HighReturnBuffer(size=10, gamma=0.5)
    good = [({}, None, 0, 1.0), ({}, None, 1, -4.0), ({}, None, 2, 8.0)]
    bad = [({}, None, 3, -1.0)]
    buf.admit([good, bad])
    # good's returns: 1 + 0.5·0 = 1.0, −4 + 0.5·8 = 0.0, 8.0; their sum 9 ≥ 0.9 × 0 admits it, and its
    # steps of positive return are kept; bad's sum −1 is below 0.9 × 9
    assert [it[2] for it in buf.items] == [0, 2] and buf.best == pytest.approx(9.0)
    buf.admit([[({}, None, 4, 1.0)]])  # 1.0 < 0.9 · 9: not admitted
    assert len(buf.items) == 2


def test_the_curve_finds_the_episode_at_95_percent_of_the_improvement():
    c = Curve(episodes=[10, 20, 30, 40], delay=[60.0, 40.0, 31.5, 30.0])
    assert c.to_reach(0.95, last=1) == 30 and c.to_reach(1.0, last=1) == 40
    # the final level is the mean of the last evaluations, not the best: an early dip counts once
    # the curve is within 95 % of where it ended
    dip = Curve(episodes=[10, 20, 30, 40, 50], delay=[60.0, 20.0, 45.0, 41.0, 39.0])
    assert dip.final(3) == pytest.approx(41.667, abs=1e-3) and dip.to_reach(0.95, last=3) == 20
    assert dip.first_at(19.0) is None and dip.first_at(45.0) == 20


def test_the_curves_best_within_its_first_episodes_is_what_a_shorter_training_reports():
    c = Curve(episodes=[10, 20, 30, 40], delay=[60.0, 40.0, 41.0, 30.0])
    assert c.best() == 30.0 and c.best(within=35) == 40.0 and c.best(within=10) == 60.0
    assert c.best_at() == 40 and Curve(episodes=[10, 20], delay=[5.0, 5.0]).best_at() == 10
    assert c.best_at(within=35) == 20  # where a training stopped at 35 had its best


def test_a_curve_with_its_first_unstable_counts_missing_reads_back_aligned(tmp_path):
    # a training resumed from a state saved before the count was recorded: the CSV's first rows
    # are blank there, and reading it back puts each count at its own episode
    from harness.rl.curves import write_curve

    curve = Curve([10, 20, 30], [50.0, 40.0, 30.0], [False, False, True], [2])
    assert curve.rows() == [(10, 50.0, False, None), (20, 40.0, False, None), (30, 30.0, True, 2)]
    write_curve(curve.rows(), tmp_path / "m.curve.csv", tmp_path / "m.curve.png", "m", ("episode", "delay", "sil_on", "unstable"))
    back = Curve.read(tmp_path / "m.pt")
    assert back.unstable_per_evaluation() == [None, None, 2] and back.unstable_at(30) == 2 and back.delay == curve.delay


@pytest.mark.parametrize("encoder", ["gat", "mlp"])
def test_the_networks_read_a_batch_of_observations(encoder):
    g = generate(SMALL, 0)
    env = DeployEnv(g)
    obs = [env.reset()]
    obs.append(env.step(int(np.flatnonzero(env.action_masks())[0]))[0])
    actor, critic = SilGpoNet(g.N, g.S, g.N, encoder), SilGpoNet(g.N, g.S, 1, encoder)
    assert actor(collate(obs)).shape == (2, g.N) and critic(collate(obs)).shape == (2, 1)
    # one observation alone gives what it gives in a batch
    torch.testing.assert_close(actor(collate(obs[1:])), actor(collate(obs))[1:], atol=1e-5, rtol=1e-4)


def test_collate_adds_the_self_loops_gatv2_would_add_itself():
    """The encoders' layers take collate's edges as they are (so that torch.compile sees no
    data-dependent shapes): the same outputs as GATv2Conv adding its own loops to the raw edges."""
    from torch_geometric.nn import GATv2Conv

    g = generate(SMALL, 0)
    obs = DeployEnv(g).reset()
    b = collate([obs])
    raw = torch.as_tensor(np.stack(np.nonzero(obs["adjacency"])))
    assert (raw[0] == raw[1]).any()  # the deployment graph lists each server with itself: the loops to replace
    torch.manual_seed(0)
    theirs = GATv2Conv(g.S, 8, heads=2)
    ours = GATv2Conv(g.S, 8, heads=2, add_self_loops=False)
    ours.load_state_dict(theirs.state_dict())
    x = b.deploy_x + torch.rand_like(b.deploy_x)  # features that differ between servers
    torch.testing.assert_close(ours(x, b.deploy_edges), theirs(x, raw), atol=1e-6, rtol=1e-5)


def _sil_only_update(sil_critic_grad: bool):
    """Critic parameters after one update whose PPO critic loss is zero and SIL holds one item."""
    g = generate(SMALL, 0)
    env = DeployEnv(g)
    obs = env.reset()
    mask = env.action_masks()
    torch.manual_seed(0)
    actor, critic = SilGpoNet(g.N, g.S, g.N, "mlp"), SilGpoNet(g.N, g.S, 1, "mlp")
    with torch.no_grad():
        v = float(critic(collate([obs])))
    sil = HighReturnBuffer(4, 0.9)
    sil.items = [(obs, mask, int(np.flatnonzero(mask)[0]), v + 5.0)] * 2
    before = [p.detach().clone() for p in critic.parameters()]
    opt_a = torch.optim.SGD(actor.parameters(), lr=0.0)
    opt_c = torch.optim.SGD(critic.parameters(), lr=0.1)
    # reward v − γ·0 on a terminal step: the one-step target equals V(s), so the PPO critic loss is 0
    steps = [(obs, mask, int(np.flatnonzero(mask)[0]), 0.0, v, True)]
    args = SilGpoArgs(epochs=1, sil_critic_grad=sil_critic_grad)
    _update(actor, critic, opt_a, opt_c, steps, 4, sil, args, np.random.default_rng(0))
    return any(not torch.equal(a, b) for a, b in zip(before, critic.parameters()))


def test_the_sil_value_loss_trains_the_critic_only_in_the_papers_form():
    assert _sil_only_update(sil_critic_grad=True)
    assert not _sil_only_update(sil_critic_grad=False)  # the code's detach: no gradient


def test_a_short_training_runs_evaluates_and_deploys_within_capacity():
    g = generate(SMALL, 1)
    actor, _, curve, secs = train(g, SilGpoArgs(episodes=4, batch_episodes=2, evaluate_every=2, encoder="mlp",
                                                sil="on", seed=3))
    assert curve.episodes == [2, 4] and len(curve.delay) == 2 and secs > 0
    X = deploy(g, actor)
    assert g.feasible(X) and X.sum() == g.initial().sum() + len(g.to_place())
    assert delay(g, X).total == pytest.approx(curve.delay[-1])  # the last evaluation is the greedy deployment


def test_each_evaluation_records_the_queues_its_deployment_leaves_unstable():
    """The code's delay scores a queue at ρ ≥ 1 a flat sojourn, so a low total can hide one: the
    curve says how many each greedy evaluation left."""
    g = generate(SMALL.sweep("arrival", (5, 7)), 1)  # loaded: an untrained actor leaves some
    actor, _, curve, _ = train(g, SilGpoArgs(episodes=4, batch_episodes=2, evaluate_every=2, encoder="mlp",
                                             sil="on", seed=3))
    assert len(curve.unstable) == 2 and curve.unstable_at(4) == delay(g, deploy(g, actor)).unstable > 0


def test_the_compiled_gat_actor_acts_on_every_thread_the_host_has():
    """GAT encoders are compiled by default; torch 2.13's parallel C++ kernels of the actor failed
    to compile on an AVX-512 host with two threads, so a training stopped at its first action."""
    g = generate(SMALL, 0)
    obs = [DeployEnv(g).reset()]
    actor = SilGpoNet(g.N, g.S, g.N, "gat")
    threads = torch.get_num_threads()
    torch.set_num_threads(max(2, threads))
    try:
        with torch.no_grad():
            compiled = for_speed((actor,), "on", "gat")[0](collate(obs))
            eager = actor(collate(obs))
    finally:
        torch.set_num_threads(threads)
    torch.testing.assert_close(compiled, eager, atol=1e-5, rtol=1e-4)


def test_rsdql_deploy_learns_toward_the_bellman_target_and_keeps_its_best_evaluation():
    from harness.families.silgpo.rsdql import RsdqlDeployArgs, _learn, _q, deploy as dqn_deploy, train as dqn_train

    g = generate(SMALL, 2)
    env = DeployEnv(g)
    obs = env.reset()
    a = int(np.flatnonzero(env.action_masks())[0])
    nxt, r, done, _ = env.step(a)
    item = (obs, a, r, nxt, done, env.action_masks())
    torch.manual_seed(0)
    net = SilGpoNet(g.N, g.S, g.N, "mlp")
    target = SilGpoNet(g.N, g.S, g.N, "mlp")
    with torch.no_grad():
        y = r + 0.9 * float(_q(target, [nxt], env.action_masks()[None]).max())
    opt = torch.optim.SGD(net.parameters(), lr=1e-3)
    args = RsdqlDeployArgs()
    before = abs(float(net(collate([obs]))[0, a]) - y)
    for _ in range(5):
        _learn(net, target, opt, [item], args)
    assert abs(float(net(collate([obs]))[0, a]) - y) < before
    best, curve, _ = dqn_train(g, RsdqlDeployArgs(episodes=4, evaluate_every=2, encoder="mlp", batch=8))
    assert delay(g, dqn_deploy(g, best)).total == pytest.approx(min(curve.delay))


def test_a_saved_model_deploys_as_it_did_and_another_policys_file_is_refused(tmp_path):
    from harness.errors import UserError
    from harness.families.silgpo.agent import load_actor
    from harness.rl.acting import save_model

    g = generate(SMALL, 1)
    actor = SilGpoNet(g.N, g.S, g.N, "mlp")
    meta = {"policy": "sil-gpo", "args": {"encoder": "mlp"}, "world_config": {"instance": 0}}
    save_model(actor, meta, tmp_path / "m.pt")
    loaded, read = load_actor(tmp_path / "m.pt", g)
    assert read == meta and np.array_equal(deploy(g, loaded), deploy(g, actor.eval()))
    save_model(actor, {**meta, "policy": "ds-ppo"}, tmp_path / "other.pt")
    with pytest.raises(UserError, match="not a SIL-GPO one"):
        load_actor(tmp_path / "other.pt", g)
