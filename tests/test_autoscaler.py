"""The HPA rule: ceil(replicas * utilisation / target), tolerance, bounds, scale-down stabilisation."""

from __future__ import annotations

from harness.autoscaler import HPA
from harness.spec.app import parse_app
from harness.spec.scenario import Autoscaling
from harness.testbed.pods import Pod

APP = parse_app({"name": "t", "gateway": "a", "services": {"a": {
    "internal_service": {"compute_pi": {"range_complexity": [1, 1]}}, "cpu-requests": "500m"}}}, "t")


def pods(n):
    return [Pod(f"a-{i}", "a", "n", "10.0.0.1", 8080 + i) for i in range(n)]


def test_scales_up_by_the_hpa_formula():
    hpa = HPA(Autoscaling(enabled=True, target_cpu=0.5, max_replicas=5), APP)
    # two pods using 0.4 cores each of 0.5 requested: utilisation 0.8, 2 * 0.8 / 0.5 = 3.2 -> 4
    d = hpa.desired("a", pods(2), {"a-0": 0.4, "a-1": 0.4}, now=0)
    assert (d.current, d.desired) == (2, 4) and abs(d.utilisation - 0.8) < 1e-9


def test_within_tolerance_nothing_changes_and_bounds_hold():
    hpa = HPA(Autoscaling(enabled=True, target_cpu=0.5, max_replicas=3), APP)
    assert hpa.desired("a", pods(2), {"a-0": 0.26, "a-1": 0.26}, now=0).desired == 2  # 0.52 / 0.5 within 10 %
    assert hpa.desired("a", pods(2), {"a-0": 5.0, "a-1": 5.0}, now=1).desired == 3  # capped at max


def test_scale_down_waits_for_the_stabilisation_window():
    hpa = HPA(Autoscaling(enabled=True, target_cpu=0.5, scale_down_stabilization_s=60), APP)
    assert hpa.desired("a", pods(4), {f"a-{i}": 0.25 for i in range(4)}, now=0).desired == 4  # at target
    assert hpa.desired("a", pods(4), {f"a-{i}": 0.01 for i in range(4)}, now=30).desired == 4  # 4 recommended 30 s ago
    assert hpa.desired("a", pods(4), {f"a-{i}": 0.01 for i in range(4)}, now=100).desired == 1


def test_no_metrics_no_decision():
    assert HPA(Autoscaling(enabled=True), APP).desired("a", pods(2), {}, now=0) is None
