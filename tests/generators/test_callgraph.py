"""Generated apps: seeded, ordinary μBench workmodels, and their call graphs within the bounds the
generator states from Alibaba's published statistics (harness.generators.callgraph)."""

from __future__ import annotations

import numpy as np
import pytest

from harness.generators.callgraph import FANOUT, app, fanout_law, stats, visits
from harness.generators.profile import BASE_MS, PER_TRIAL_MS
from harness.generators.files import save
from harness.spec.app import load_app


def test_the_fanout_law_is_the_published_one():
    p = fanout_law(300)
    assert p.sum() == pytest.approx(1.0)
    assert [p[k] for k in (1, 2, 3, 4)] == pytest.approx([FANOUT[k] for k in (1, 2, 3, 4)], abs=1e-3)
    assert p[5:].sum() == pytest.approx(0.097, abs=1e-3)  # about a tenth call five or more
    assert p[5] > p[10] > p[50] > p[200] > 0  # a heavy tail out to hundreds of callees
    assert p[10] / p[20] == pytest.approx(4.0)  # k^-2


def test_the_same_seed_gives_the_same_app_and_another_seed_another():
    assert app(80, 7, pods=200) == app(80, 7, pods=200)
    assert app(80, 7, pods=200) != app(80, 8, pods=200)


@pytest.mark.parametrize("services,pods", [(2, 2), (10, 10), (120, 2000), (500, 600)])
def test_a_generated_app_is_a_workmodel_with_its_pods(tmp_path, services, pods):
    doc = app(services, 3, "gen", pods=pods)
    a = load_app(save(doc, tmp_path / "gen.json"))  # checks every call, the jobs and that there is no cycle
    assert len(a.services) == services and a.total_pods() == pods and a.gateway == "s0"
    assert not a.warnings  # nothing μBench would read that harness ignores
    assert all(s.replicas >= 1 for s in a.services.values())


def test_call_graphs_are_within_the_stated_bounds():
    """Over 20 seeds of 200 services: about a tenth of the callers call five or more (Luo et al.:
    10 %); most services called have one caller (the trace: 90 % within a call graph); some are hot
    spots shared by many; tree-like and deep; a request visits a small part of the app."""
    rows = [stats(app(200, seed, pods=400)) for seed in range(20)]
    mean = {k: float(np.mean([r[k] for r in rows])) for k in rows[0]}
    assert 0.06 <= mean["fanout_5_or_more"] <= 0.16
    assert 0.88 <= mean["in_degree_one"] <= 0.98
    assert mean["max_in_degree"] >= 5
    assert max(r["max_fanout"] for r in rows) >= 20  # the tail reaches far
    assert mean["depth"] >= 5
    assert 1.5 <= mean["visits_per_request"] <= 10
    assert all(r["calls"] >= r["services"] - 1 for r in rows)  # every service but the gateway is called


def test_replicas_follow_the_work_the_requests_bring():
    doc = app(50, 1, pods=1000)
    demand = {s: v * (BASE_MS + PER_TRIAL_MS * doc["services"][s]["internal_service"]["loader"]["cpu_stress"]["trials"])
              for s, v in visits(doc).items()}
    reps = {s: spec["replicas"] for s, spec in doc["services"].items()}
    share = {s: demand[s] / sum(demand.values()) * (1000 - 50) for s in demand}  # beyond one replica each
    assert all(abs(reps[s] - 1 - share[s]) < 1 for s in reps)


@pytest.mark.parametrize("services,pods,match", [(1, None, "at least 2"), (10, 5, "cannot give")])
def test_impossible_apps_are_refused(services, pods, match):
    with pytest.raises(ValueError, match=match):
        app(services, pods=pods)
