"""The simulated HPA keeps the run's clock: its scale-down stabilisation window is of virtual
seconds. (On the host's clock a simulated run of minutes lasts a second or two, and the window
never passed: the simulated HPA never scaled down.)"""

from __future__ import annotations

from harness.spec.scenario import Step
from tests.scenarios.test_sim_lifecycle import events, simulate


def surge_then_quiet(sc) -> None:
    sc.load.steps = [Step(at_s=0, value=6), Step(at_s=60, value=1)]
    sc.autoscaling.scale_down_stabilization_s = 30


def test_the_simulated_hpa_scales_down_after_its_window_of_virtual_time(tmp_path):
    (summary,) = simulate(tmp_path, "traffic-surge", ["default"], edit=surge_then_quiet)
    ev = events(summary)
    scale = ev[ev.kind == "scale"]
    ups = [d for d in scale.detail if d["to"] > d["current"]]
    downs = [d for d in scale.detail if d["to"] < d["current"]]
    assert ups and downs, scale.detail.tolist()
    t_down = [t for t, d in zip(scale.t_run, scale.detail) if d["to"] < d["current"]]
    assert min(t_down) > 60 + 30 - 15  # down only once the quiet has lasted the window (one HPA period's slack)
