"""SIL-GPO's world on the local testbed: servers in the nodes' namespaces, the users in the client
node, the testbed's RTTs on every hop; the measured mean beside the model's, and nothing left
running afterwards."""

from __future__ import annotations

import urllib.request

import pytest

from harness.families.silgpo import live as graph_live
from tests.workload.test_graph_cell import tiny

pytestmark = [pytest.mark.root, pytest.mark.slow]


def test_a_deployment_measured_on_the_testbed_matches_the_model_with_its_rtts(local_testbed, tmp_path):
    g, X = tiny()
    cluster = local_testbed.cluster
    (m,) = graph_live.run(cluster, g, {"tiny": X}, repeats=1, duration_s=12, out=tmp_path, seed=3)
    servers, client = graph_live.servers_on(cluster, g)
    between, from_client = graph_live.rtts_s(cluster, servers, client)
    assert between.max() > 0.02  # the hops cross the testbed's links, not loopback
    (measured, n), = m.per_type.values()
    assert n > 80 and m.failed == 0
    print(f"measured {measured:.1f} ms over {n} requests, model {m.expected_ms[0]:.1f} ms")
    assert measured == pytest.approx(m.expected_ms[0], rel=0.15)
    assert (tmp_path / "tiny-r1/summary.json").exists() and (tmp_path / "tiny-r1/requests.csv").exists()
    for s in servers:  # every server stopped
        with pytest.raises(OSError):
            urllib.request.urlopen(f"http://{cluster.node(s).address}:{graph_live.PORT}/healthz", timeout=1)
