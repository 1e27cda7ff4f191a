"""The simulated HPA keeps the run's clock: its scale-down stabilisation window is of virtual
seconds. (On the host's clock a simulated run of minutes lasts a second or two, and the window
never passed: the simulated HPA never scaled down.)"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from harness.scenarios.session import prepare, run_simulated
from harness.spec.inventory import load_inventory
from harness.spec.scenario import Step
from harness.testbed.simulated import simulated_state
from tests.conftest import REPO


def test_the_simulated_hpa_scales_down_after_its_window_of_virtual_time(tmp_path):
    state = simulated_state(load_inventory(None))
    session = prepare("traffic-surge", ["default"], state, None, None, REPO / "models", tmp_path, suffix="-sim")
    sc = session.scenario
    sc.load.steps = [Step(at_s=0, value=6), Step(at_s=60, value=1)]  # a surge, then quiet
    sc.autoscaling.scale_down_stabilization_s = 30
    (summary,) = run_simulated(state, session, 1)
    ev = pd.read_csv(Path(summary["run_dir"]) / "events.csv")
    scale = [json.loads(d) for d in ev[ev.kind == "scale"].detail]
    ups = [e for e in scale if e["to"] > e["current"]]
    downs = [e for e in scale if e["to"] < e["current"]]
    assert ups and downs, scale
    t_down = [t for t, d in zip(ev[ev.kind == "scale"].t_run, scale) if d["to"] < d["current"]]
    assert min(t_down) > 60 + 30 - 15  # down only once the quiet has lasted the window (one HPA period's slack)
