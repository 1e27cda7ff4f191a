"""harness profile on the real testbed: node types rank by speed for a CPU-heavy service."""

from __future__ import annotations

import json

import pytest

from harness.profiling import profile_app, write_profile
from harness.spec.app import load_app
from harness.spec.profile import load_profile
from tests.conftest import REPO

pytestmark = [pytest.mark.root, pytest.mark.slow, pytest.mark.host_timing]  # speed ratios of the node types


def test_profile_ranks_node_types_by_configured_speed(local_testbed, tmp_path):
    app = load_app(REPO / "workloads/chain.json")
    app.services = {"ml": app.services["ml"]}  # the CPU-heavy one (REACH Table IV: 8 x 400 digits)
    app.gateway = "ml"

    def ratios(prof) -> tuple[float, float]:
        ml = prof.services["ml"]
        return ml["edge-a"].p50_ms / ml["cloud-a"].p50_ms, ml["edge-b"].p50_ms / ml["cloud-a"].p50_ms

    # Medians, so that a few requests slowed by the host (a 2-core VM whose speed swings) do not
    # decide the ratio (CI saw a cloud-a mean of 315 ms against 308 ms on edge-a, medians 217 vs
    # 265). A stretch of stolen time or a neighbour on the core adds the same wall time to every
    # node type and so compresses the ratios (CI once saw 1.19 for 1.5); up to three profiles are
    # taken and the first with both ratios near the configured speeds counts. A testbed that does
    # not apply the speeds fails all three.
    for _ in range(3):
        prof = profile_app(local_testbed.cluster, app, "test", requests=12, warmup=2)
        ea, eb = ratios(prof)
        if ea == pytest.approx(1.5, rel=0.20) and eb == pytest.approx(2.0, rel=0.20):
            break
    ml = prof.services["ml"]
    assert set(ml) == {"cloud-a", "edge-a", "edge-b"}
    assert ml["cloud-a"].p50_ms < ml["edge-a"].p50_ms < ml["edge-b"].p50_ms
    assert ea == pytest.approx(1.5, rel=0.20)
    assert eb == pytest.approx(2.0, rel=0.20)
    assert ml["cloud-a"].samples == 12
    assert prof.rtt_ms["configured"]["cloud-a-1"]["edge-a-1"] == 50
    assert 45 < prof.rtt_ms["measured"]["cloud-a-1"]["edge-a-1"] < 55
    assert not local_testbed.cluster.pods()  # profiling cleaned up after itself

    js, cs = write_profile(prof, tmp_path)
    assert js.name == "chain.test.json" and cs.name == "chain.test.csv"
    assert load_profile(js).execution_ms("ml", "edge-b") == ml["edge-b"].mean_ms
    rows = cs.read_text().splitlines()
    assert rows[0].startswith("service,node_type,tier,mean_ms") and len(rows) == 4


@pytest.mark.parametrize("name", ["chain", "aggregator-sequential", "aggregator-parallel"])
def test_committed_profiles_load_and_rank_ml(name):
    prof = load_profile(REPO / f"profiles/{name}.reach-local.json")
    assert set(prof.services) == {"front-end", "ml", "back-end", "db"}
    ml = prof.services["ml"]
    assert ml["cloud-a"].mean_ms < ml["edge-a"].mean_ms < ml["edge-b"].mean_ms
    assert json.loads((REPO / f"profiles/{name}.reach-local.json").read_text())["testbed"] == "reach-local"
