"""Each simulated request draws its own job times around the profile's means, its own route over
the replicas' nodes and its own RTTs: seeds differ, the p95 is above the mean, and ``--variability
means`` gives the old, exact runs."""

import json
import subprocess
import sys

import numpy as np

from harness.sim.ceenv import default_model
from harness.sim.trace_replay import replay_ms
from harness.sim.variability import RequestSpread, cv_matrix, job_factors
from harness.spec.profile import load_profile


def test_job_factors_have_mean_one_and_the_asked_spread():
    rng = np.random.default_rng(0)
    f = job_factors(rng, np.array([0.0, 0.1, 0.5]), (200_000,))
    assert np.all(f[:, 0] == 1.0)
    assert np.allclose(f[:, 1:].mean(axis=0), 1.0, atol=0.01)
    assert np.allclose(f[:, 1:].std(axis=0), [0.1, 0.5], rtol=0.03)


def test_a_requests_latency_spreads_around_the_models():
    profile = load_profile("profiles/chain.reach-local.json")
    model = default_model("workloads/chain.json", "profiles/chain.reach-local.json")
    X = np.zeros((model.S, len(model.topo.nodes)))
    X[:, 0] = 1
    cv = cv_matrix(model, profile)
    assert cv.max() > 0.05  # harness profile measured a spread
    r = RequestSpread(cv, np.random.default_rng(1)).ratios(model, X, 4000)
    assert abs(r.mean() - 1) < 0.02 and r.std() > 0.01 and np.percentile(r, 95) > 1.0
    assert np.all(RequestSpread(np.zeros_like(cv), np.random.default_rng(1)).ratios(model, X, 10) == 1.0)
    arrivals = np.linspace(0, 5, 50)
    exact = replay_ms(model, X, arrivals, seed=3)
    assert np.array_equal(replay_ms(model, X, arrivals, seed=3, job_cv=np.zeros_like(cv)), exact)
    drawn = replay_ms(model, X, arrivals, seed=3, job_cv=cv)
    assert not np.array_equal(drawn, exact) and abs(drawn.mean() / exact.mean() - 1) < 0.1


def _evaluate(tmp_path, *extra):
    r = subprocess.run([sys.executable, "-m", "harness", "evaluate", "node-failure", "--policy", "default", "--seeds",
                        "3", "--out", str(tmp_path), "--json", *extra], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_seeds_of_a_closed_loop_differ_and_p95_is_above_the_mean(tmp_path):
    runs = _evaluate(tmp_path)
    means = [s["mean_ms"] for s in runs]
    assert len(set(means)) == 3
    assert all(s["p95_ms"] > s["mean_ms"] for s in runs)


def test_means_only_gives_one_run_for_every_seed_and_a_flat_profile_still_routes(tmp_path):
    """``--variability means``: every request at its placement's mean, the seeds one run. A profile
    that measured no spread still spreads requests over the replicas' nodes (their routes)."""
    means = _evaluate(tmp_path / "means", "--variability", "means")
    assert len({s["mean_ms"] for s in means}) == 1 and len({s["p95_ms"] for s in means}) == 1
    p = json.loads(open("profiles/chain.reach-local.json").read())
    for by_type in p["services"].values():
        for t in by_type.values():
            t["std_ms"], t["p50_ms"], t["p95_ms"] = 0.0, t["mean_ms"], t["mean_ms"]
    flat = tmp_path / "flat.json"
    flat.write_text(json.dumps(p))
    runs = _evaluate(tmp_path / "out", "--profile", str(flat))
    assert len({s["mean_ms"] for s in runs}) == 3 and all(s["p95_ms"] > s["mean_ms"] for s in runs)


# ---------------------------------------------------------------- each request's route
def test_a_request_runs_on_one_replica_per_service_drawn_in_proportion():
    from harness.sim.variability import route_draws

    X = np.array([[3.0, 1.0, 0.0], [0.0, 0.0, 2.0]])
    routes = route_draws(np.random.default_rng(0), X, 40_000)
    assert routes.shape == (40_000, 2, 3) and np.all(routes.sum(axis=2) == 1)
    assert np.allclose(routes.mean(axis=0), X / X.sum(axis=1, keepdims=True), atol=0.01)


def test_replicas_on_several_nodes_spread_requests_where_one_node_does_not():
    model = default_model("workloads/chain.json", "profiles/chain.reach-local.json")
    none = np.zeros((model.S, len(model.topo.nodes)))
    one = np.zeros_like(none)
    one[:, 0] = 2  # two replicas of each service, one node: one route
    assert np.all(RequestSpread(none, np.random.default_rng(1)).ratios(model, one, 50) == 1.0)
    two = np.zeros_like(none)
    two[:, [0, 2]] = 1  # a cloud and an edge replica of each service
    r = RequestSpread(none, np.random.default_rng(1), route_rng=np.random.default_rng(2)).ratios(model, two, 4000)
    assert r.std() > 0.05 and r.min() < 1 < r.max()
    assert np.all(RequestSpread(none, np.random.default_rng(1), routes=False).ratios(model, two, 50) == 1.0)
    # a route is a placement of one replica per service: each request's latency is one of theirs
    import itertools

    routes = []
    for pick in itertools.product((0, 2), repeat=model.S):
        one_each = np.zeros_like(none)
        one_each[np.arange(model.S), pick] = 1
        routes.append(float(model.latency(one_each)[0]))
    ms = RequestSpread(none, np.random.default_rng(1), route_rng=np.random.default_rng(2)).latencies(model, two, 500)
    assert np.all(np.isclose(ms[:, None], np.array(routes)[None], rtol=1e-9).any(axis=1))
    assert len(np.unique(np.round(ms, 6))) > 4  # not always the same few routes


# ---------------------------------------------------------------- the network's jitter
def _with_jitter(profile, sd_ms: float):
    """``profile`` with every link between two nodes measured at ``sd_ms`` of RTT spread."""
    nodes = list(profile.nodes)
    return profile.model_copy(update={"rtt_sd_ms": {a: {b: 0.0 if a == b else sd_ms for b in nodes} for a in nodes}})


def test_each_link_draws_its_rtt_around_the_models_with_the_measured_spread():
    from harness.sim.variability import link_draws, link_sd

    profile = load_profile("profiles/chain.reach-local.json")
    model = default_model("workloads/chain.json", "profiles/chain.reach-local.json")
    assert not any(a.any() for a in link_sd(model, profile))  # the committed profile measured none
    sd = link_sd(model, _with_jitter(profile, 4.0))
    far = model.D > 10  # the 50 ms links between cloud and edge
    assert np.all(sd[0][model.D > 0] == 4.0) and np.all(np.diag(sd[0]) == 0) and np.all(sd[1] == 4.0)
    D, user = link_draws(np.random.default_rng(0), model, sd, 20_000)
    assert np.allclose(D.mean(axis=0)[far], model.D[far], rtol=0.01)
    assert np.allclose(D.std(axis=0)[far], 4.0, rtol=0.05) and np.all(D >= 0) and np.all(user >= 0)
    assert np.all(D[:, model.D == 0] == 0)  # a call within a node is not drawn


def test_a_link_measured_on_other_nodes_of_its_types_takes_their_spread():
    from harness.sim.variability import link_sd

    profile = load_profile("profiles/chain.reach-local.json")
    model = default_model("workloads/chain.json", "profiles/chain.reach-local.json")
    one = profile.model_copy(update={"rtt_sd_ms": {"cloud-a-1": {"edge-a-1": 3.0}, "edge-b-1": {"client-a-1": 2.0}}})
    sd, user = link_sd(model, one)
    i = {n: k for k, n in enumerate(model.topo.nodes)}
    assert sd[i["cloud-a-2"], i["edge-a-2"]] == 3.0 == sd[i["edge-a-1"], i["cloud-a-1"]]  # same types, by name or not
    assert sd[i["cloud-a-1"], i["edge-b-1"]] == 0.0  # types never measured together
    assert user[i["edge-b-2"]] == 2.0 and user[i["cloud-a-1"]] == 0.0


def test_jitter_alone_spreads_requests_and_leaves_the_job_draws_as_they_were():
    from harness.sim.variability import link_sd

    profile = load_profile("profiles/chain.reach-local.json")
    model = default_model("workloads/chain.json", "profiles/chain.reach-local.json")
    X = np.zeros((model.S, len(model.topo.nodes)))
    X[:, [0, 2]] = 1  # a cloud and an edge node: calls cross the 50 ms links (routes aside: jitter alone)
    none = np.zeros((model.S, len(model.topo.nodes)))
    sd = link_sd(model, _with_jitter(profile, 5.0))
    r = RequestSpread(none, np.random.default_rng(1), links=sd, link_rng=np.random.default_rng(2), routes=False).ratios(model, X, 4000)
    assert abs(r.mean() - 1) < 0.01 and r.std() > 0.01
    cv = cv_matrix(model, profile)
    jobs = RequestSpread(cv, np.random.default_rng(1), routes=False).ratios(model, X, 600)
    both = RequestSpread(cv, np.random.default_rng(1), links=sd, link_rng=np.random.default_rng(2),
                         routes=False).ratios(model, X, 600)
    assert not np.array_equal(jobs, both) and abs(both.mean() / jobs.mean() - 1) < 0.02
    arrivals = np.linspace(0, 5, 50)
    exact = replay_ms(model, X, arrivals, seed=3)
    assert np.array_equal(replay_ms(model, X, arrivals, seed=3, link_sd=link_sd(model, profile)), exact)
    drawn = replay_ms(model, X, arrivals, seed=3, link_sd=sd)
    assert not np.array_equal(drawn, exact) and abs(drawn.mean() / exact.mean() - 1) < 0.05


# ---------------------------------------------------------------- several entries
def _two_apps():
    from harness.sim.topology import model_for
    from harness.spec.app import compose, load_app
    from harness.spec.profile import compose_profiles

    apps = [load_app("workloads/chain.json"), load_app("workloads/aggregator-parallel.json")]
    profile = compose_profiles(apps, [load_profile(f"profiles/{a.name}.reach-local.json") for a in apps])
    return model_for(compose(apps), profile), profile


def test_each_entry_has_its_own_latency_and_d_msa_is_their_mean():
    from harness.sim.queueing import QueueingModel, visits

    model, profile = _two_apps()
    X = np.zeros((model.S, len(model.topo.nodes)))
    X[:, 0] = 1
    X[model.index["chain-front-end"]] = [0, 0, 1, 1, 0, 0]  # Chain's gateway on the two edge-a nodes
    X[model.index["aggregator-parallel-ml"]] = [0, 1, 0, 0, 0, 0]  # beside its sibling call's node: no sharing
    t = model.terms(X)
    chain, agg = model.index["chain-front-end"], model.index["aggregator-parallel-front-end"]
    each = np.array([model.request_ms(X, t, e)[0] for e in (chain, agg)])
    assert np.isclose(each.mean(), t["D_msa"][0]) and np.isclose(model.request_ms(X, t)[0], t["D_msa"][0])
    assert abs(each[0] - each[1]) > 10  # Chain's three calls against Aggregator-Parallel's
    # a load may enter below an app's gateway: that service's own time and calls, and the user's RTT to it
    ml = model.index["chain-ml"]
    assert np.isclose(model.request_ms(X, t, ml)[0], t["T_S"][0, ml] + model.user_rtt[0])
    # a request entering at an entry takes that entry's path, in the replay and in the closed loop's draw
    arrivals = np.arange(40) * 2.0  # 2 s apart: no queueing
    for e, want in zip((chain, agg), each):
        ms = replay_ms(model, X, arrivals, seed=1, entry=e)
        assert np.isclose(ms.mean(), want, rtol=1e-3)  # its replicas in turn: their mean
    cv = cv_matrix(model, profile)
    r = [RequestSpread(cv, np.random.default_rng(1)).ratios(model, X, 4000, entry=e).mean() for e in (chain, agg)]
    assert np.allclose(r, 1.0, atol=0.02)
    # a closed loop's users of one app queue on that app's services only
    v = visits(model, chain)
    assert v[chain] == 1 and v[agg] == 0 and v[model.index["aggregator-parallel-db"]] == 0
    q = QueueingModel(model)
    assert q.closed_latency(X, 5, chain) > q.closed_latency(X, 1, chain)
    agg_ml = model.index["aggregator-parallel-ml"]  # alone on cloud-a-2, which no Chain request reaches
    assert q.closed_execution(X, 5, chain)[agg_ml, 1] == model.E[agg_ml, 1] < q.closed_execution(X, 5, agg)[agg_ml, 1]


def test_two_apps_simulated_give_each_app_its_own_latency(tmp_path):
    r = subprocess.run([sys.executable, "-m", "harness", "evaluate", "two-apps", "--policy", "cloud-first", "--seeds",
                        "1", "--out", str(tmp_path), "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    (run,) = json.loads(r.stdout)
    chain, agg = run["entries"]["chain-front-end"], run["entries"]["aggregator-parallel-front-end"]
    assert chain["requests"] > 10 and agg["requests"] > 10
    assert abs(chain["mean_ms"] / agg["mean_ms"] - 1) > 0.05  # the same number for both apps before


def test_apps_composed_from_a_calibrated_profile_simulate_without_its_sources_names(tmp_path):
    """A calibrated profile names its source, one app's profile; composed with another app's, the
    source's services (``front-end``) are not the composition's (``chain-front-end``)."""
    from harness.rescheduler.live import LiveView
    from harness.spec.app import compose, load_app
    from harness.spec.inventory import load_inventory
    from harness.spec.profile import compose_profiles
    from harness.testbed.simulated import SimCluster, simulated_state

    apps = [load_app("workloads/chain.json"), load_app("workloads/aggregator-parallel.json")]
    calibrated = load_profile("profiles/chain.reach-local.calibrated.json")
    assert calibrated.calibration.source_profile
    profile = compose_profiles(apps, [calibrated, load_profile("profiles/aggregator-parallel.reach-local.json")])
    assert profile.calibration.source_profile == "" and profile.calibration.call_overhead_ms == \
        calibrated.calibration.call_overhead_ms
    state = simulated_state(load_inventory(None))
    view = LiveView(compose(apps), profile, state, SimCluster(state))
    assert view.uncalibrated is None and view.model.S == 8
