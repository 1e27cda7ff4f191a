"""A day's load in the shape published for Azure Functions: its mean, its diurnal shape over a
constant half, bursts, and a scenario that validates."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.generators.day import day_steps, scenario
from harness.generators.files import save
from harness.spec.loader import load_model
from harness.spec.scenario import Scenario


def rates(steps) -> np.ndarray:
    return np.array([s["value"] for s in steps])


def test_the_mean_is_the_one_asked_and_the_steps_cover_the_run():
    steps = day_steps(3.0, seed=1, duration_s=86400, step_s=300)
    assert [s["at_s"] for s in steps] == [300.0 * k for k in range(288)]
    assert rates(steps).mean() == pytest.approx(3.0, rel=1e-3)
    short = day_steps(2.0, seed=1, duration_s=1000, step_s=300)  # a last step shorter than the others
    widths = np.diff([s["at_s"] for s in short] + [1000])
    assert float((rates(short) * widths).sum() / 1000) == pytest.approx(2.0, rel=1e-3)


def test_without_noise_half_is_constant_and_the_peak_is_three_times_the_trough():
    steps = day_steps(1.0, duration_s=86400, step_s=3600, noise=0.0, burst_p=0.0, peak_hour=14)
    r = rates(steps)
    assert int(np.argmax(r)) in (13, 14) and int(np.argmin(r)) in (1, 2)
    assert r.max() / r.min() == pytest.approx(3.0, rel=0.02)
    assert r.min() == pytest.approx(0.5, rel=0.02)  # the constant baseline: half the mean


def test_the_same_seed_gives_the_same_day_and_bursts_happen():
    assert day_steps(1.0, seed=3) == day_steps(1.0, seed=3) != day_steps(1.0, seed=4)
    calm = rates(day_steps(1.0, seed=3, burst_p=0.0, noise=0.0))
    bursty = rates(day_steps(1.0, seed=3, burst_p=0.2, noise=0.0))
    assert (bursty / bursty.mean() > 1.5 * calm / calm.mean()).sum() >= 10


def test_a_day_is_a_scenario_and_its_limit_is_raised_only_as_needed(tmp_path):
    small = scenario("workloads/chain.json", 0.5, duration_s=86400)
    assert "limits" not in small
    sc = load_model(Scenario, save(small, tmp_path / "day.yaml"))
    assert sc.load.mode == "open" and sc.duration_s == 86400 and len(sc.load.steps) == 288
    big = scenario("workloads/chain.json", 2.0, duration_s=86400)
    assert big["limits"]["requests"] >= math.ceil(2.0 * 86400)
    load_model(Scenario, save(big, tmp_path / "big.yaml"))
