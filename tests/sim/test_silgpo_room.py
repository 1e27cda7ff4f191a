"""Whether a deployment can leave one of SIL-GPO's instances with no room (``families.silgpo.room``):
never at Figs 8-10's instances, so no agent reading there counts fewer instances; and where the
servers are made smaller, the packing it finds does leave one without room in ``DeployEnv``."""

import dataclasses

import numpy as np
import pytest

from harness.families.silgpo.env import DeployEnv
from harness.families.silgpo.room import packing_without_room, steps_without_room
from studies.silgpo.sweeps import SWEEPS, instance


@pytest.mark.parametrize("figure", SWEEPS)
def test_no_deployment_leaves_an_instance_of_figs_8_10_without_room(figure):
    for value in SWEEPS[figure]:
        for k in range(3):
            assert steps_without_room(instance(figure, value, k)) == [], (figure, value, k)


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
