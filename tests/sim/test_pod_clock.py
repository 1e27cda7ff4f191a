"""Each simulated pod's start and stop times, drawn from the profile's pod lifecycle per node type."""

import numpy as np
import pytest

from harness.sim.lifecycle import PodClock
from harness.spec.profile import PodLifecycle, load_profile


def test_without_a_lifecycle_pods_start_and_go_at_once():
    clock = PodClock(load_profile("profiles/chain.reach-local.json"), np.random.default_rng(0))
    assert not clock.measured and clock.ready_s("cloud-a") == 0.0 and clock.gone_s("edge-b") == 0.0
    assert not PodClock(None, np.random.default_rng(0)).measured


def test_times_are_drawn_per_pod_around_the_types_mean_and_an_unmeasured_type_takes_the_others():
    profile = load_profile("profiles/chain.reach-local.json").model_copy(update={"lifecycle": {
        "cloud-a": PodLifecycle(ready_s=1.0, ready_sd_s=0.2, gone_s=0.5, samples=4),
        "edge-a": PodLifecycle(ready_s=3.0, ready_sd_s=0.0, gone_s=1.5, samples=4)}})
    clock = PodClock(profile, np.random.default_rng(0))
    ready = [clock.ready_s("cloud-a") for _ in range(20_000)]
    assert np.mean(ready) == pytest.approx(1.0, rel=0.01) and np.std(ready) == pytest.approx(0.2, rel=0.05)
    assert clock.ready_s("edge-a") == 3.0 and clock.gone_s("cloud-a") == 0.5  # no spread measured: the mean
    assert clock.fallback.ready_s == 2.0 and clock.gone_s("edge-b") == 1.0  # edge-b: the mean of the two
    again = PodClock(profile, np.random.default_rng(0))
    assert [again.ready_s("cloud-a") for _ in range(5)] == ready[:5]  # one seed, one draw
