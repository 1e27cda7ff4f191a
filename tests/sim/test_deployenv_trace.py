"""harness's SIL-GPO world under ``silgpo_compat`` against a step-by-step trace of the authors'
own ``NEW_PPO/Environment.py`` (17451c5), run beside the project by ``studies.silgpo.authors_trace``
(the fixture holds its numbers only): the instance their generator draws, the total delay after
every step, the reward, and the state their ``agent_step`` returns — its vector (the traffic and
mask of an instance) and the routing graphs it chooses."""

import json
from pathlib import Path

import numpy as np
import pytest

from harness.families.silgpo.env import DeployEnv
from harness.families.silgpo.world import code_instance

TRACE = json.loads((Path(__file__).parent / "data" / "silgpo_authors_trace.json").read_text())


@pytest.fixture(scope="module")
def g():
    return code_instance()


def _routing(obs) -> tuple[list[float], list[int]]:
    return [float(r.sum()) for r in obs["routing"]], [e.shape[1] for e in obs["routing_edges"]]


def assert_their_state(obs, want, where):
    """The state their ``agent_step`` returned: its vector and its routing graphs."""
    np.testing.assert_allclose(obs["vector"], want["vector"], rtol=1e-5, atol=1e-5, err_msg=f"{where}: vector")
    sums, edges = _routing(obs)
    assert len(sums) == len(want["routing_sums"]), f"{where}: routing graphs {len(sums)}, code {len(want['routing_sums'])}"
    np.testing.assert_allclose(sums, want["routing_sums"], rtol=1e-5, atol=1e-5, err_msg=f"{where}: routing features")
    assert edges == want["routing_edges"], f"{where}: routing edges"


def test_the_instance_is_theirs(g):
    assert_their_instance(g, TRACE["instance"])


def assert_their_instance(g, inst: dict) -> None:
    """``g`` is the instance their trace recorded: servers, services, requests, the order placed,
    the invocation graph."""
    assert g.cpu.tolist() == inst["servers"]["cpu"] and g.gpu.tolist() == inst["servers"]["gpu"]
    assert g.mem.tolist() == inst["servers"]["mem"]
    np.testing.assert_allclose(g.bw * 10, inst["servers"]["bandwidth"])
    assert g.adj.astype(int).tolist() == inst["servers"]["connected"]
    np.testing.assert_allclose(g.mu, inst["services"]["mu"])
    assert (g.s_cpu.tolist(), g.s_gpu.tolist(), g.s_mem.tolist()) == \
        (inst["services"]["cpu"], inst["services"]["gpu"], inst["services"]["mem"])
    np.testing.assert_allclose(g.s_out / 100, inst["services"]["data"])  # their data is in units of 100 MB
    assert g.preferred.tolist() == inst["services"]["preferred"]
    np.testing.assert_allclose(g.rate, inst["requests"]["rate"])
    assert [c.tolist() for c in g.chains] == inst["requests"]["chain"]
    assert g.entry.tolist() == inst["requests"]["entry"]
    assert g.to_place().tolist() == inst["order"]
    assert_their_invocation_graph(g, inst["invocation"])


def test_the_invocation_graph_is_theirs(g):
    assert_their_invocation_graph(g, TRACE["instance"]["invocation"])


def assert_their_invocation_graph(g, inv: dict) -> None:
    """The same in every state: their ``get_ms_graph``'s node features and edges (a chain's first
    AI service linked by its AI index)."""
    obs = DeployEnv(g).reset()
    feats = obs["invocation"].copy()
    feats[:, 4] /= 100  # harness keeps the output size in MB; the code's data is in units of 100 MB
    np.testing.assert_allclose(feats, inv["features"], rtol=1e-6)
    assert sorted(map(tuple, np.argwhere(obs["invocation_adjacency"]).tolist())) == [tuple(e) for e in inv["edges"]]


@pytest.mark.parametrize("episode", ["greedy", "fixed"])
def test_every_step_is_theirs(g, episode):
    """Both episodes in one env, as the trace ran them (the reward carries the previous episode's
    delay): each step places their instance, scores their delay and reward, and returns their
    state; the vector describes the instance the next action places."""
    env = DeployEnv(g)
    for name in ("greedy", "fixed"):
        ep = TRACE["episodes"][name]
        obs = env.reset()
        assert env.current == pytest.approx(ep["start_delay"], rel=1e-9)
        if name == episode:
            assert_their_state(obs, ep["reset"], f"{name} reset")
        for k, step in enumerate(ep["steps"]):
            assert (env.t, env.service()) == (step["instance"], step["service"]), f"{name} step {k}"
            obs, reward, done, info = env.step(step["action"])
            assert info["delay"] == pytest.approx(step["delay"], rel=1e-9), f"{name} step {k}: delay"
            assert reward == pytest.approx(step["reward"], rel=1e-9, abs=1e-9), f"{name} step {k}: reward"
            assert done == step["done"]
            if name == episode:
                assert_their_state(obs, step, f"{name} step {k}")
        assert env.current == pytest.approx(ep["final_delay"], rel=1e-9)


def test_their_anchors():
    """The start's delay and their one-line greedy, as their code prints them."""
    greedy = TRACE["episodes"]["greedy"]
    assert round(greedy["start_delay"], 1) == 112.7
    assert round(greedy["final_delay"], 2) == 24.75


def test_the_paper_form_shows_the_placed_instance(g):
    """Without ``silgpo_compat`` the vector and the routing graphs both describe the instance the
    action places, from the reset on."""
    from dataclasses import replace

    env = DeployEnv(replace(g, compat=False))
    obs = env.reset()
    while not env.done:
        m = env.service()
        np.testing.assert_array_equal(obs["vector"][g.N:], env.action_masks())
        held = [r for r, c in enumerate(g.chains) if m in c]
        assert len(obs["routing"]) == len(held)
        obs = env.step(int(np.flatnonzero(env.action_masks())[0]))[0]
