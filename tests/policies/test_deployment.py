"""SIL-GPO's decision process (families.silgpo.env) and the deployment baselines (families.silgpo.baselines)."""

import numpy as np
import pytest

from harness.families.silgpo.baselines import DEPLOYERS, helas, mfds_fpr, random_feasible
from harness.families.silgpo.env import CODE_START, DeployEnv
from harness.families.silgpo.world import ServiceGraphConfig, code_instance, delay, generate


def test_an_episode_places_every_instance_with_the_codes_rewards():
    g = code_instance()
    env = DeployEnv(g)
    assert env.steps == 62 and (env.X == g.initial()).all()
    obs = env.observation()
    assert obs["vector"].shape == (20,) and obs["deployment"].shape == (10, 15) and obs["invocation"].shape == (15, 6)
    # the code describes the next instance: its traffic per server, then where it fits
    nxt = env.service(1)
    assert obs["routing"].shape[0] == sum(nxt in c for c in g.chains)
    rewards = []
    while not env.done:
        before = env.current
        n = int(g.preferred[env.service()])
        _, r, done, info = env.step(n)
        if not done:
            assert r == pytest.approx(10.0 if info["delay"] == before else 10 * (before - info["delay"]))
        rewards.append(r)
    final = env.current
    assert final == pytest.approx(24.752, abs=1e-3)
    assert rewards[-1] == pytest.approx((before - final) + 2 * (CODE_START - final))
    # the code's "lowest" is the episode just ended, so the next episode compares with it twice
    env.reset()
    while not env.done:
        before = env.current
        _, r, _, _ = env.step(int(g.preferred[env.service()]))
    assert r == pytest.approx(before - final)


def test_a_server_without_room_is_refused():
    g = code_instance()
    env = DeployEnv(g)
    gpu_less = int(np.flatnonzero(g.gpu == 0)[0])
    assert g.ai[env.service()]  # AI services first, and they need a GPU
    assert not env.action_masks()[gpu_less]
    with pytest.raises(ValueError, match="does not fit"):
        env.step(gpu_less)


@pytest.mark.parametrize("name", sorted(DEPLOYERS))
def test_every_baseline_places_the_same_instances_within_capacity(name):
    g = generate(ServiceGraphConfig(requests=10, ai_requests=4) if name == "rollout" else ServiceGraphConfig(), 1)
    kw = {"population": 6, "generations": 2} if name == "helas" else {}
    X = (helas if name == "helas" else DEPLOYERS[name])(g, np.random.default_rng(0), **kw)
    assert g.feasible(X)
    assert (X.sum(axis=1) == g.initial().sum(axis=1) + g.demand()).all()


def test_mfds_fpr_only_keeps_moves_that_lower_the_delay():
    g = code_instance()
    for seed in range(2):
        start = delay(g, random_feasible(g, np.random.default_rng(seed))).total
        assert delay(g, mfds_fpr(g, np.random.default_rng(seed))).total < start


def test_the_queue_aware_greedy_matches_or_beats_the_codes_greedy_on_its_instance():
    g = code_instance()
    assert delay(g, DEPLOYERS["queue-greedy"](g, None)).total <= delay(g, DEPLOYERS["preferred"](g, None)).total


TINY = ServiceGraphConfig(servers=3, hac=(2,), microservices=4, ai_services=1, requests=5, ai_requests=2,
                          chain=(2, 3), chain_ai_ms=(1, 2), chain_ai_ai=(1, 1), silgpo_compat=True)


def test_the_rollout_is_never_worse_than_the_greedy_it_rolls_out_and_sometimes_better():
    from harness.families.silgpo.baselines import optimal, queue_greedy, rollout

    gains = []
    for seed in range(6):
        g = generate(TINY, seed)
        ro, qg, opt = (delay(g, f(g)).total for f in (rollout, queue_greedy, optimal))
        assert opt - 1e-12 <= ro <= qg + 1e-12, seed
        gains.append(qg - ro)
    assert max(gains) > 1e-9  # it is not queue-greedy under another name


def test_the_optimum_is_the_best_of_every_assignment_and_no_baseline_beats_it():
    import itertools

    from harness.families.silgpo.baselines import optimal

    g = generate(TINY, 2)
    best = np.inf
    for servers in itertools.product(range(g.N), repeat=len(g.to_place())):  # every instance anywhere
        X = g.initial()
        np.add.at(X, (g.to_place(), list(servers)), 1)
        if g.feasible(X):
            best = min(best, delay(g, X).total)
    opt = delay(g, optimal(g)).total
    assert opt == pytest.approx(best)
    for name, deploy in DEPLOYERS.items():
        kw = {"population": 10, "generations": 20} if name == "helas" else {}  # its budget is for the full instance
        assert delay(g, deploy(g, np.random.default_rng(0), **kw)).total >= opt - 1e-12, name
    with pytest.raises(ValueError, match="tiny"):
        optimal(code_instance())


def test_helas_keeps_the_same_share_of_the_agents_budget_on_every_instance():
    # SIL-GPO's training computes the delay once a step, so its budget grows with the instances an
    # episode places; HELAS's generations follow (its evaluations per generation do not depend on them)
    from harness.families.silgpo.baselines import helas_generations

    assert helas_generations(code_instance()) == 570  # the authors' instance: the ranking's budget, unchanged
    shares = []
    for sweep, value in (("arrival", (1, 3)), ("arrival", (5, 7)), ("requests", 10)):
        g = code_instance(ServiceGraphConfig(silgpo_compat=True).sweep(sweep, value))
        shares.append(helas_generations(g) / len(g.to_place()))
    assert max(shares) - min(shares) < 0.05 and len(code_instance(ServiceGraphConfig(silgpo_compat=True).sweep(
        "arrival", (5, 7))).to_place()) > 100


def test_helas_places_as_it_did_when_every_gene_summed_the_servers_use_again(monkeypatch):
    """HELAS's decoding keeps each server's use as it adds instances; it must place exactly as
    the plain rule (``fits`` summing the whole deployment at every gene) does, random draws and
    all, or every HELAS number published would move."""
    from harness.families.silgpo import baselines

    def plain(g, genes, rng):
        X, placed = g.initial(), genes.copy()
        for i, m in enumerate(g.to_place()):
            fits = g.fits(X, m)
            if not fits.any():
                continue
            if not fits[placed[i]]:
                placed[i] = rng.choice(np.flatnonzero(fits))
            X[m, placed[i]] += 1
        return X, placed

    config = ServiceGraphConfig(silgpo_compat=True)
    for g in (code_instance(config, 3), code_instance(config.sweep("requests", 50), 4),
              code_instance(config.sweep("arrival", (5, 7)), 3)):
        kept = helas(g, np.random.default_rng(7), population=20, generations=4)
        monkeypatch.setattr(baselines, "_decode", plain)
        again = helas(g, np.random.default_rng(7), population=20, generations=4)
        monkeypatch.undo()
        assert np.array_equal(kept, again)
