import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from harness.sim.ceenv import ENV_ID, CEEnv, CEEnvVector, EnvConfig


def test_env_checker_passes_on_every_registered_harness_env():
    from harness.gym_envs import ENVS

    ids = [i for i in gym.registry if i.startswith("harness/")]
    assert sorted(ids) == sorted(ENVS) and ENV_ID in ids
    for i in ids:
        check_env(gym.make(i).unwrapped, skip_render_check=True)


def test_masked_actions_are_exactly_the_valid_moves():
    env = CEEnv()
    obs, info = env.reset(seed=3, options={"replicas": [2, 2, 2, 2]})
    mask = info["action_mask"]
    d = env.dyn
    assert mask[-1]  # idle is always allowed
    cpu, mem = d.used(env.st)
    for a in range(d.n_actions - 1):
        slot, node = divmod(a, d.N)
        pod_node = env.st.node[0, slot]
        fits = cpu[0, node] + d.r_cpu[slot] <= d.C_cpu[node] and mem[0, node] + d.r_mem[slot] <= d.C_mem[node]
        assert mask[a] == (pod_node >= 0 and pod_node != node and fits)
    for a in np.flatnonzero(~mask[:-1])[:20]:
        _, r, term, _, _ = env_copy(env).step(a)  # without the mask: -100 and the end
        assert r == -100 and term
    for a in np.flatnonzero(mask[:-1])[:50]:
        e = env_copy(env)
        before = e.st.latency[0]
        _, r, term, _, info2 = e.step(a)
        assert not term and r == pytest.approx(before - info2["latency_ms"] - 2)


def env_copy(env):
    import copy
    return copy.deepcopy(env)


def test_idle_ends_episode_without_reward_and_step_cap_truncates():
    env = CEEnv(config=EnvConfig(max_steps=3))
    env.reset(seed=0)
    _, r, term, trunc, _ = env.step(env.action_space.n - 1)
    assert (r, term, trunc) == (0.0, True, False)
    env.reset(seed=1)
    for k in range(3):
        valid = np.flatnonzero(env.action_masks()[:-1])
        _, _, term, trunc, _ = env.step(valid[0])
    assert trunc and not term


def test_capacity_is_never_exceeded_under_random_masked_play():
    batch = CEEnvVector(16, dyn=CEEnv().dyn)
    _, info = batch.reset(seed=0)
    rng = np.random.default_rng(0)
    d = batch.dyn
    for _ in range(200):
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in info["action_mask"]])
        _, _, _, _, info = batch.step(acts)
        cpu, mem = d.used(batch.st)
        pods_cpu = cpu - batch.st.bg_cpu
        assert (pods_cpu <= d.C_cpu - batch.st.bg_cpu + 1e-6).all()


def test_node_failure_moves_pods_off_the_failed_node():
    env = CEEnv(config=EnvConfig(node_failure_prob=1.0, max_steps=2))
    env.reset(seed=5)
    env.step(np.flatnonzero(env.action_masks()[:-1])[0])
    env.step(np.flatnonzero(env.action_masks()[:-1])[0]) if not env.st.up.all() else None
    down = np.flatnonzero(~env.st.up[0])
    assert len(down) == 1
    assert not (env.st.node[0] == down[0]).any()
    assert not env.action_masks()[:-1].reshape(-1, env.dyn.N)[:, down[0]].any()


def test_same_seed_same_episode():
    a, b = CEEnv(), CEEnv()
    oa, _ = a.reset(seed=42)
    ob, _ = b.reset(seed=42)
    assert np.array_equal(oa, ob)


@pytest.mark.parametrize("share, expect_all_large", [(1.0, True), (0.0, False)])
def test_large_share_draws_the_largest_deployment(share, expect_all_large):
    env = CEEnv(config=EnvConfig(large_share=share))
    pods = []
    for seed in range(40):
        env.reset(seed=seed)
        pods.append(int((env.st.node[0] >= 0).sum()))
    full = env.dyn.S * env.dyn.cfg.replicas[1]
    assert (all(p == full for p in pods)) == expect_all_large, pods


def test_make_vec_reaches_the_batched_dynamics_with_masks():
    envs = gym.make_vec(ENV_ID, num_envs=4, vectorization_mode="vector_entry_point")
    obs, info = envs.reset(seed=3)
    assert obs.shape == (4, envs.single_observation_space.shape[0]) and info["action_mask"].shape == (4, envs.single_action_space.n)
    assert envs.unwrapped.metadata["autoreset_mode"] == gym.vector.AutoresetMode.SAME_STEP
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(60):
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in info["action_mask"]])
        obs, r, term, trunc, info = envs.step(acts)
        assert all(envs.single_observation_space.contains(o) for o in obs)
        if "final_obs" in info:
            ended += int(info["_final_obs"].sum())
    assert ended > 0  # idle ends episodes; they restart in the same step


def test_observations_stay_within_the_declared_bounds():
    env = CEEnv(config=EnvConfig(node_failure_prob=0.5, failed_at_start=0.5))
    space = env.observation_space
    assert space.high.max() <= 1.0 + 1e-6  # REACH's apps: 0.5 cores, 256 MiB, well under a second
    rng = np.random.default_rng(1)
    for seed in range(20):
        obs, info = env.reset(seed=seed)
        for _ in range(10):
            assert space.contains(obs), (obs.min(), (obs - space.high).max())
            obs, _, term, trunc, info = env.step(rng.choice(np.flatnonzero(info["action_mask"])))
            if term or trunc:
                break


def test_an_episode_started_by_the_default_scheduler_is_its_placement_pod_by_pod():
    """The compiled episode start against kube_scheduler.default_choice called pod by pod."""
    from harness.sim import kube_scheduler

    env = CEEnv(config=EnvConfig(start="default", replicas=(3, 3)))
    d = env.dyn
    for seed in range(5):
        env.reset(seed=seed)
        st = env.st
        cpu, mem = st.bg_cpu[0].copy(), st.bg_mem[0].copy()
        expect = -np.ones(d.P, int)
        for slot in np.flatnonzero(st.node[0] >= 0):  # slots in order, as the episode start places them
            same = (d.slot_service == d.slot_service[slot]) & (expect >= 0)
            peers = np.bincount(expect[same], minlength=d.N)
            n = kube_scheduler.default_choice(st.up[0], d.C_cpu, d.C_mem, cpu, mem, d.r_cpu[slot], d.r_mem[slot], peers)
            expect[slot] = n
            cpu[n] += d.r_cpu[slot]
            mem[n] += d.r_mem[slot]
        assert np.array_equal(expect, st.node[0])
        assert (st.node[0] >= 0).sum() == 3 * d.S


def test_replica_counts_without_slots_are_refused():
    env = CEEnv()  # 5 slots per service
    with pytest.raises(ValueError, match=r"within 1..5, got \[6, 2, 2, 2\]"):
        env.reset(seed=0, options={"replicas": [6, 2, 2, 2]})


def test_the_autoscaler_rescales_one_service_per_event_and_its_new_pods_go_where_the_default_scheduler_puts_them():
    """scale_prob=1: every step one service gets another replica count; a scale-up fills the
    service's lowest free slots pod by pod as kube_scheduler.default_choice chooses, a scale-down
    empties its highest slots; the move's reward does not include the event's effect."""
    from harness.sim import kube_scheduler

    env = CEEnv(config=EnvConfig(scale_prob=1.0, max_steps=40))
    d = env.dyn
    rng = np.random.default_rng(0)
    ups = downs = 0
    for seed in range(6):
        _, info = env.reset(seed=seed)
        for _ in range(8):
            before = env.st.node[0].copy()
            cpu, mem = d.used(env.st)
            a = rng.choice(np.flatnonzero(info["action_mask"][:-1]))
            moved = before.copy()
            moved[a // d.N] = a % d.N
            cpu[0, before[a // d.N]] -= d.r_cpu[a // d.N]
            cpu[0, a % d.N] += d.r_cpu[a // d.N]
            mem[0, before[a // d.N]] -= d.r_mem[a // d.N]
            mem[0, a % d.N] += d.r_mem[a // d.N]
            _, r, term, trunc, info = env.step(a)
            assert not term and r == pytest.approx(-2.0)  # the move's latency change is lost in the event's
            after = env.st.node[0]
            changed = np.flatnonzero(after != moved)
            services = set(d.slot_service[changed])
            assert len(services) == 1, (moved, after)
            slots = np.flatnonzero(d.slot_service == services.pop())
            held_before, held_after = moved[slots] >= 0, after[slots] >= 0
            assert held_before.sum() != held_after.sum()
            if held_after.sum() > held_before.sum():
                ups += 1
                new = changed
                assert np.array_equal(new, slots[~held_before][:len(new)])  # the lowest free slots
                expect = moved.copy()
                for slot in new:
                    same = (d.slot_service == d.slot_service[slot]) & (expect >= 0)
                    n = kube_scheduler.default_choice(env.st.up[0], d.C_cpu, d.C_mem, cpu[0], mem[0], d.r_cpu[slot],
                                                      d.r_mem[slot], np.bincount(expect[same], minlength=d.N))
                    expect[slot] = n
                    cpu[0, n] += d.r_cpu[slot]
                    mem[0, n] += d.r_mem[slot]
                assert np.array_equal(expect, after)
            else:
                downs += 1
                gone = changed
                assert np.array_equal(gone, slots[held_before][-len(gone):])  # the highest (newest) pods
            assert np.isfinite(env.st.latency[0]) and env.st.latency[0] == pytest.approx(d.latency(env.st)[0])
    assert ups > 5 and downs > 5


def test_under_load_the_latency_is_the_queueing_models_and_the_rate_is_observed():
    """With a load range, each episode's rate is drawn in it, the latency (and so the reward) is
    node-ps queueing's at that rate — below the knee exactly sim.queueing's — and the observation's
    last feature is the rate's share of the range's top. Without load nothing of it appears."""
    from harness.sim.queueing import QueueingModel

    plain = CEEnvVector(4, dyn=CEEnv().dyn)
    plain.reset(seed=1)
    loaded_env = CEEnv(config=EnvConfig(load=(1.0, 12.0)))
    dyn = loaded_env.dyn
    assert dyn.obs_dim == plain.dyn.obs_dim + 1
    envs = CEEnvVector(64, dyn=dyn)
    envs.reset(seed=1)
    st = envs.st
    assert ((st.load >= 1.0) & (st.load <= 12.0)).all() and np.ptp(st.load) > 5
    assert not plain.st.load.any()
    queue = QueueingModel(dyn.model, "node-ps")
    X = dyn.counts(st.node)
    rho = np.array([queue.node_load(X[b], st.load[b]).max() for b in range(64)])
    below = rho < dyn.cfg.load_knee
    assert 5 < below.sum() < 64  # both sides of the knee are exercised
    for b in np.flatnonzero(below):
        assert st.latency[b] == pytest.approx(queue.latency(X[b], st.load[b]), rel=1e-9)
    free = dyn.model.latency(X)
    assert (st.latency > free).all()  # waiting only adds
    over = np.flatnonzero(~below)
    assert np.isfinite(st.latency[over]).all() and (st.latency[over] > free[over] * 5).all()
    obs = envs.dyn.observe(envs.st)
    assert np.allclose(obs[:, -1], st.load / 12.0)
    assert np.allclose(obs[:, -2], st.latency / 1000)


def test_under_closed_loop_users_the_latency_is_mean_value_analysis():
    """load_kind closed: whole users drawn in the range, the latency sim.queueing's closed form —
    with one user REACH's load-free model exactly, with more never less."""
    from harness.sim.queueing import QueueingModel

    dyn = CEEnv(config=EnvConfig(load=(1.0, 6.0), load_kind="closed")).dyn
    envs = CEEnvVector(64, dyn=dyn)
    envs.reset(seed=2)
    st = envs.st
    assert set(np.unique(st.load)) == {1.0, 2.0, 3.0, 4.0, 5.0, 6.0}
    X = dyn.counts(st.node)
    queue = QueueingModel(dyn.model, "node-ps")
    free = dyn.model.latency(X)
    for b in range(64):
        assert st.latency[b] == pytest.approx(queue.closed_latency(X[b], int(st.load[b])), rel=1e-9)
        if st.load[b] == 1:
            assert st.latency[b] == pytest.approx(free[b], rel=1e-12)
        else:
            assert st.latency[b] > free[b]


def test_a_load_range_must_be_ordered_and_the_knee_below_one():
    for bad in ({"load": (3.0, 1.0)}, {"load": (-1.0, 1.0)}, {"load_knee": 1.0}, {"load_kind": "both"},
                {"load": (0.0, 3.0), "load_kind": "closed"}):
        with pytest.raises(ValueError):
            EnvConfig(**bad).validate()
    EnvConfig(load=(0.0, 12.0)).validate()


def test_gymnasium_makes_ceenv_by_the_module_qualified_id_in_a_fresh_process():
    """No prior import of harness: Gymnasium imports the module named in the id (docs/policies.md)."""
    import subprocess
    import sys

    code = "import gymnasium as gym; e = gym.make('harness.sim.ceenv:harness/CEEnv-v0'); print(e.reset(seed=1)[0].shape)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip().startswith("("), r.stderr


def test_fewer_slots_than_the_replica_range_keeps_episodes_within_the_slots():
    """EnvConfig(max_replicas=3) with the default 1-5 replicas wrote past the slots in the compiled
    reset (a crash); the episodes now draw within the slots."""
    import gymnasium as gym

    from harness.sim.ceenv import EnvConfig

    env = gym.make("harness/CEEnv-v0", config=EnvConfig(max_replicas=3))
    for seed in range(50):
        env.reset(seed=seed)
        counts = (env.unwrapped.st.node[0].reshape(-1, 3) >= 0).sum(axis=1)
        assert counts.max() <= 3 and counts.min() >= 1
