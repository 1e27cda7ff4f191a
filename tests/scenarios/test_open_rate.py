"""The rate a scenario sends at a time, when it is known (open or periodic loads only)."""

from harness.scenarios.run import open_rate
from harness.spec.scenario import Scenario


def scenario(*loads):
    return Scenario(name="s", description="d", duration_s=100, app="chain", load=list(loads))


def test_open_and_periodic_rates_add_up_step_by_step():
    sc = scenario({"mode": "open", "steps": [{"at_s": 0, "value": 2}, {"at_s": 30, "value": 5}]},
                  {"mode": "periodic", "steps": [{"at_s": 0, "value": 1}]})
    assert open_rate(sc, 0.0) == 3 and open_rate(sc, 29.9) == 3 and open_rate(sc, 30.0) == 6 and open_rate(sc, -2) == 3


def test_a_closed_loop_has_no_known_rate():
    sc = scenario({"mode": "open", "steps": [{"at_s": 0, "value": 2}]}, {"mode": "closed"})
    assert open_rate(sc, 10.0) is None
