"""The modelled profile: each service's time from its job, scaled by each type's speed."""

from __future__ import annotations

import pytest

from harness.generators.callgraph import app
from harness.generators.continuum import continuum
from harness.generators.files import save
from harness.generators.profile import BASE_MS, PER_TRIAL_MS, modelled_profile
from harness.spec.profile import load_profile


def test_times_follow_the_trials_and_the_speeds(tmp_path):
    inv, doc = continuum(30, 0), app(12, 0)
    prof = load_profile(save(modelled_profile(doc, inv), tmp_path / "p.json"))
    speed = {t: v["speed"] for t, v in inv["node_types"].items()}
    assert "user" not in next(iter(prof.services.values()))  # clients run no service
    for name, spec in doc["services"].items():
        trials = spec["internal_service"]["loader"]["cpu_stress"]["trials"]
        for t, timing in prof.services[name].items():
            assert timing.mean_ms == pytest.approx((BASE_MS + PER_TRIAL_MS * trials) * max(speed.values()) / speed[t],
                                                   abs=1e-3)
            assert timing.p50_ms < timing.mean_ms < timing.p95_ms
    assert prof.rtt_ms == {} and len(prof.nodes) == len(inv["nodes"])
