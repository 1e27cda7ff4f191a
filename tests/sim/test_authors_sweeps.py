"""Figs 8-10's points as the authors' own code builds them (``NEW_PPO/Environment.py`` at 17451c5
with each point's parameter file, seeded with 3 as it seeds itself on import, then 4 and 5: the
sweeps' three instances), traced beside the project by ``studies.silgpo.authors_trace --sweeps``
(the fixture holds numbers only): harness's ``code_instance`` of each setting and seed must be
their instance, allow what their ``get_mark`` allows, score their greedy episode's delay at every
step, and give their reward wherever their greedy placed nothing that does not fit; and at seed 3
(the instance their ``main.py`` trains on) harness's env must step through their fixed-rule episode
returning their state, reward and delay at every step: what the agent sees at each point."""

import json
from pathlib import Path

import pytest

from harness.families.silgpo.baselines import DEPLOYERS
from harness.families.silgpo.env import DeployEnv
from harness.families.silgpo.world import delay
from studies.silgpo.authors_trace import PARAMETER_FILES
from studies.silgpo.sweeps import FIRST_SEED, SWEEPS, instance, label
from tests.sim.test_deployenv_trace import assert_their_instance, assert_their_state

TRACE = json.loads((Path(__file__).parent / "data" / "silgpo_authors_sweeps.json").read_text())
POINTS = {f"{p['figure']}={p['value']}-s{p['seed']}": p for p in TRACE["points"]}
VALUES = {(figure, label(value)): value for figure, values in SWEEPS.items() for value in values}


def _world(point: dict):
    """The sweeps' own instance of the point at the trace's seed."""
    return instance(point["figure"], VALUES[point["figure"], point["value"]], point["seed"] - FIRST_SEED)


def test_every_point_is_traced_from_its_own_parameter_file_at_the_sweeps_seeds():
    for figure, values in SWEEPS.items():
        for value in values:
            traced = [p for p in TRACE["points"] if (p["figure"], p["value"]) == (figure, label(value))]
            assert [p["seed"] for p in traced] == [3, 4, 5], (figure, value)
            want = "Arguments.py" if (figure, value) == ("arrival", (2, 4)) else \
                "Environmental_parameters/" + PARAMETER_FILES[figure].format(*(value if isinstance(value, tuple)
                                                                               else (value,)))
            assert {p["file"] for p in traced} == {want}
            # the sweeps' instances are these: seed 3 first
            assert [c.tolist() for c in instance(figure, value, 0).chains] == traced[0]["instance"]["requests"]["chain"]


@pytest.mark.parametrize("name", POINTS)
def test_the_instance_is_theirs(name):
    assert_their_instance(_world(POINTS[name]), POINTS[name]["instance"])


@pytest.mark.parametrize("name", POINTS)
def test_their_greedy_episode_scores_the_same_at_every_step(name):
    """The room their ``get_mark`` sees and the delay after each of their greedy placements,
    misfits included (their code places an instance where it does not fit; the delay does not
    look at capacity), and, where every placement fits, the episode in harness's env: the same
    rewards and the same end."""
    point, g = POINTS[name], _world(POINTS[name])
    greedy = point["greedy"]
    X = g.initial()
    assert delay(g, X).total == pytest.approx(greedy["start_delay"], rel=1e-9)
    for k, (m, a) in enumerate(zip(g.to_place(), greedy["actions"])):
        assert int(g.fits(X, m)[a]) == greedy["fits"][k], f"step {k}: room"
        X[m, a] += 1
        assert delay(g, X).total == pytest.approx(greedy["delays"][k], rel=1e-9), f"step {k}"
    if all(greedy["fits"]):
        env = DeployEnv(g)
        env.reset()
        for k, a in enumerate(greedy["actions"]):
            _, reward, done, info = env.step(a)
            assert reward == pytest.approx(greedy["rewards"][k], rel=1e-9, abs=1e-9), f"step {k}: reward"
        assert done and env.current == pytest.approx(greedy["delays"][-1], rel=1e-9)


@pytest.mark.parametrize("name", POINTS)
def test_the_preferred_baseline_is_their_greedy_where_it_fits(name):
    """harness's ``preferred`` is their ``greedy_deployment()`` wherever the preferred server has
    room; where it has none (λ from 3-5 up, at 6 of the 42 instances) harness places the
    instance elsewhere, and its deployment, unlike theirs, respects every server's capacity."""
    point, g = POINTS[name], _world(POINTS[name])
    X = DEPLOYERS["preferred"](g, None)
    theirs = point["greedy"]["delays"][-1]
    if all(point["greedy"]["fits"]):
        assert delay(g, X).total == pytest.approx(theirs, rel=1e-9)
    else:
        assert g.feasible(X) and delay(g, X).total != pytest.approx(theirs, rel=1e-6)


def test_the_default_setting_is_one_point_of_two_figures():
    """Fig. 8's λ 2-4 (their Arguments.py) and Fig. 10's 30 requests (number_of_service_30.py)
    are the same instances: harness trains them once."""
    for seed in (3, 4, 5):
        a, b = POINTS[f"arrival=2-4-s{seed}"], POINTS[f"requests=30-s{seed}"]
        assert a["instance"] == b["instance"] and a["greedy"] == b["greedy"]


TRAINED_ON = [name for name, p in POINTS.items() if "fixed" in p]


def test_every_parameter_file_has_a_state_trace_at_the_instance_their_code_trains_on():
    """Every point but λ 2-4, their default setting (``Arguments.py``), whose states the main
    trace holds (``test_deployenv_trace.py``); 30 requests, the same instance, from its own file."""
    assert sorted(TRAINED_ON) == sorted(f"{f}={label(v)}-s{FIRST_SEED}" for f, vs in SWEEPS.items() for v in vs
                                        if (f, v) != ("arrival", (2, 4)))


@pytest.mark.parametrize("name", TRAINED_ON)
def test_the_agent_sees_their_state_at_every_step(name):
    """Their fixed-rule episode ran after their greedy one in the same environment (so its last
    reward carries that episode's delay, which their code also keeps as its "lowest"); harness's
    compat env, carrying the same, places their instance at each step and returns their state."""
    point, g = POINTS[name], _world(POINTS[name])
    ep, env = point["fixed"], DeployEnv(g)
    assert len(ep["steps"]) == len(point["instance"]["order"])  # every instance placed, none left out
    env.carry({"last_episode": point["greedy"]["delays"][-1], "lowest": point["greedy"]["delays"][-1]})
    obs = env.reset()
    assert env.current == pytest.approx(ep["start_delay"], rel=1e-9)
    assert_their_state(obs, ep["reset"], "reset")
    for k, step in enumerate(ep["steps"]):
        assert (env.t, env.service()) == (step["instance"], step["service"]), f"step {k}"
        obs, reward, done, info = env.step(step["action"])
        assert info["delay"] == pytest.approx(step["delay"], rel=1e-9), f"step {k}: delay"
        assert reward == pytest.approx(step["reward"], rel=1e-9, abs=1e-9), f"step {k}: reward"
        assert done == step["done"], f"step {k}"
        assert_their_state(obs, step, f"step {k}")
    assert env.done and env.current == pytest.approx(ep["final_delay"], rel=1e-9)
