"""Whether a deployment can leave one of SIL-GPO's instances with no room (``families.silgpo.room``):
never at Figs 8-10's instances, so no agent reading there counts fewer instances; on tiny
instances, exactly the steps at which some episode, tried every way, finds no room; and where
the servers are made smaller, the packing it finds does leave one without room in ``DeployEnv``."""

import dataclasses

import numpy as np
import pytest

from harness.families.silgpo.env import DeployEnv
from harness.families.silgpo.room import packing_without_room, steps_without_room
from harness.families.silgpo.world import ServiceGraph, code_instance, ServiceGraphConfig
from studies.silgpo.sweeps import SWEEPS, instance


@pytest.mark.parametrize("figure", SWEEPS)
def test_no_deployment_leaves_an_instance_of_figs_8_10_without_room(figure):
    for value in SWEEPS[figure]:
        for k in range(3):
            assert steps_without_room(instance(figure, value, k)) == [], (figure, value, k)


def test_nor_at_the_authors_instance_in_the_papers_form():
    assert steps_without_room(code_instance(ServiceGraphConfig(silgpo_compat=False), 3)) == []


def _tiny(rng, compat: bool) -> ServiceGraph:
    """Three servers, three services (one an AI service): storage in 13s against capacities
    that are sometimes multiples of 13 (where the code's strict test differs), and a start that
    may overfill a server."""
    return ServiceGraph(
        cpu=rng.integers(3, 13, 3).astype(float), gpu=rng.integers(0, 4, 3).astype(float),
        mem=(13 * rng.integers(3, 10, 3) + rng.choice([0, 5], 3)).astype(float),
        bw=np.ones(3), adj=np.ones((3, 3), bool), s_cpu=rng.integers(1, 3, 3).astype(float),
        s_gpu=np.array([1.0, 0, 0]), s_mem=13.0 * rng.integers(1, 3, 3), s_out=np.ones(3),
        mu=np.array([1.5, 2.0, 1.5]), ai=np.array([True, False, False]),
        chains=[np.array([0, 1]), np.array([1, 2])], rate=np.array([2.0, 3.0]), size_in=np.ones(2),
        preferred=rng.integers(0, 3, 3), compat=compat)


def _tried_every_way(g: ServiceGraph) -> list[int]:
    """The steps at which some episode (every choice of server, no instance left out before)
    finds no server where the instance fits, by enumerating the deployments reachable."""
    states, steps = {g.initial().tobytes(): g.initial()}, []
    for t, m in enumerate(g.to_place()):
        fits = {key: g.fits(X, m) for key, X in states.items()}
        if not all(f.any() for f in fits.values()):
            steps.append(t)
        following = {}
        for key, X in states.items():
            for n in np.flatnonzero(fits[key]):
                Y = X.copy()
                Y[m, n] += 1
                following[Y.tobytes()] = Y
        states = following
    return steps


@pytest.mark.parametrize("compat", [True, False])
def test_on_tiny_instances_it_names_exactly_the_steps_some_episode_runs_out_of_room(compat):
    rng, named = np.random.default_rng(7), 0
    for _ in range(60):
        g = _tiny(rng, compat)
        assert len(g.to_place()) == 8
        steps = _tried_every_way(g)
        assert steps_without_room(g) == steps
        named += bool(steps)
    assert 10 <= named <= 50, named  # both answers are exercised


def _smaller(figure="arrival", value=(5, 7), k=0, share=0.6):
    g = instance(figure, value, k)
    return dataclasses.replace(g, cpu=np.floor(g.cpu * share), mem=np.floor(g.mem * share))


def _replay(g, X, t) -> DeployEnv:
    """An episode placing the first ``t`` instances as ``X`` has them (beyond the start)."""
    env, left = DeployEnv(g), X - g.initial()
    env.reset()
    for _ in range(t):
        m = env.service()
        server = int(np.flatnonzero(left[m] > 0)[0])
        assert env.action_masks()[server], "the packing found is not within capacity"
        left[m, server] -= 1
        env.step(server)
    return env


def test_the_packing_it_finds_leaves_the_instance_without_room_in_the_env():
    g = _smaller()
    steps = steps_without_room(g)
    assert steps, "servers at 60 % should leave some instance without room"
    for t in steps[::5]:
        env = _replay(g, packing_without_room(g, t), t)
        assert env.dropped >= 1 and env.t == t + env.dropped, t  # left out from instance t on: it fitted nowhere


def test_no_random_episode_runs_out_of_room_before_the_first_step_it_names():
    g, rng = _smaller(), np.random.default_rng(0)
    first = steps_without_room(g)[0]
    for _ in range(30):
        env = DeployEnv(g)
        env.reset()
        while not env.done and not env.dropped:
            env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        if env.dropped:
            assert env.t - env.dropped >= first
