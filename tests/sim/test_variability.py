"""Each simulated request draws its own job times around the profile's means: seeds differ, the
p95 is above the mean, and a profile that measured no spread gives the old, exact runs."""

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


def test_a_profile_without_spread_gives_the_models_mean_to_every_request(tmp_path):
    p = json.loads(open("profiles/chain.reach-local.json").read())
    for by_type in p["services"].values():
        for t in by_type.values():
            t["std_ms"], t["p50_ms"], t["p95_ms"] = 0.0, t["mean_ms"], t["mean_ms"]
    flat = tmp_path / "flat.json"
    flat.write_text(json.dumps(p))
    runs = _evaluate(tmp_path / "out", "--profile", str(flat))
    assert len({s["mean_ms"] for s in runs}) == 1
