"""The rescheduler's cycle guard, in simulation (the live loop uses the same guard)."""

from __future__ import annotations

from harness.sim.ceenv import Dynamics, EnvConfig, default_model
from harness.sim.evaluate import run_policy


class Toggle:
    """Moves the first pod back and forth between two nodes, never idles."""

    moves = True

    def next_move(self, dyn, st, b):
        slot = 0
        here = st.node[b, slot]
        for node in (0, 1):
            if node != here:
                return slot, node


class TwoSteps:
    """Two different moves, then idle: the guard must let honest progress through."""

    moves = True

    def __init__(self):
        self.n = 0

    def next_move(self, dyn, st, b):
        self.n += 1
        if self.n > 2:
            return None
        cur = st.node[b, 0]
        return 0, (cur + 1) % dyn.N


def test_a_policy_going_back_and_forth_is_stopped_after_one_move():
    dyn = Dynamics(default_model(None, None), EnvConfig())
    r = run_policy(dyn, Toggle(), "toggle", 4, [0], max_moves=30)
    assert r.moves <= 2  # at most to the other node and (if it started elsewhere) one more, never 30


def test_distinct_moves_are_not_stopped():
    dyn = Dynamics(default_model(None, None), EnvConfig())
    assert run_policy(dyn, TwoSteps(), "two", 4, [0], max_moves=30).moves == 2
