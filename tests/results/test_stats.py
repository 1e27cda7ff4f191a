"""Confidence of a measured mean under load (batch means) and the equivalence test the fidelity
benchmark's bars use."""

from __future__ import annotations

import numpy as np
import pytest

from harness.results.stats import batch_means_ci95, difference_ci95, mean_ci95, relative_difference_ci95, within_bar


def test_batch_means_widen_the_interval_when_latencies_drift_together():
    # a queue that built up half-way through: consecutive requests share their waiting
    t = np.linspace(0, 100, 1000)
    v = np.where(t < 50, 100.0, 300.0) + np.random.default_rng(0).normal(0, 5, len(t))
    naive = mean_ci95(v)[1]
    half = batch_means_ci95(t, v)
    assert half > 10 * naive
    # ten batches of ten seconds: five near 100, five near 300
    means = [v[(t >= 10 * b) & (t < 10 * (b + 1) if b < 9 else t <= 100)].mean() for b in range(10)]
    assert half == pytest.approx(mean_ci95(means)[1])


def test_batch_means_of_independent_values_are_close_to_the_plain_interval():
    rng = np.random.default_rng(1)
    t = np.sort(rng.uniform(0, 300, 3000))
    v = rng.exponential(200.0, len(t))
    assert batch_means_ci95(t, v) == pytest.approx(mean_ci95(v)[1], rel=0.6)


def test_too_short_a_series_has_no_interval():
    assert batch_means_ci95([0.0, 4.0, 9.0], [1.0, 2.0, 3.0]) is None  # under two 5 s batches
    assert batch_means_ci95([1.0], [1.0]) is None
    assert batch_means_ci95([0.0, 4.0, 10.0], [1.0, 2.0, 3.0]) is not None


@pytest.mark.parametrize("predicted, measured, half, expected", [
    (100.0, 105.0, 3.0, True),     # every mean in [102, 108] is within 15 % of 100
    (100.0, 160.0, 10.0, False),   # every mean in [150, 170] is more than 15 % away
    (100.0, 60.0, 5.0, False),     # far below too
    (100.0, 110.0, 40.0, None),    # [70, 150]: some means are within, some are not
    (100.0, 100.0, None, None),    # no interval: cannot tell
    (100.0, 60.0, 70.0, None),     # the interval reaches 0 and past 115
    (100.0, 20.0, 30.0, False),    # it reaches 0, but no mean up to 50 is near 100
])
def test_within_bar_is_an_equivalence_test(predicted, measured, half, expected):
    assert within_bar(predicted, measured, half, 0.15) is expected


def test_the_difference_of_two_means_has_welchs_interval_rounded_wide():
    a, b = [1.0, 2.0, 3.0], [2.0, 4.0, 6.0, 8.0]
    diff, half = difference_ci95(a, b)
    # variances of the means 1/3 and 5/3; Welch's degrees of freedom 4.07, rounded down to 4
    # (t = 2.776); an interval with equal variances would use 5 (t = 2.571)
    assert diff == pytest.approx(-3.0) and half == pytest.approx(2.776 * np.sqrt(1 / 3 + 5 / 3))
    assert difference_ci95([1.0], b)[1] is None and difference_ci95([2.0, 2.0], [3.0, 3.0]) == (-1.0, None)


def test_the_relative_difference_is_in_percent_of_the_second_mean():
    a, b = [1.0, 2.0, 3.0], [2.0, 4.0, 6.0, 8.0]  # b's mean 5: the difference −3 is −60 % of it
    pct, half = relative_difference_ci95(a, b)
    assert pct == pytest.approx(-60.0) and half == pytest.approx(100 * difference_ci95(a, b)[1] / 5)
    assert relative_difference_ci95([2.0, 2.0], [4.0, 4.0]) == (-50.0, None)
