"""`harness reschedule`'s loop against the Kubernetes backend on the FAKE API server: it binds
the pods nobody bound and lets the trained policy move pods out of a bad placement."""

from __future__ import annotations

import io
import json

from harness.policies import build
from harness.spec.app import load_app
from harness.spec.profile import load_profile
from harness.rescheduler.service import json_events, run_service
from harness.testbed.pods import deploy
from tests.conftest import REPO
from tests.kube.fake_apiserver import fake_kube_cluster

# the front-end on the edge, everything else on a far edge group: REACH's model improves on it
BAD = {"front-end": ["edge-a-1"], "ml": ["edge-b-1"], "back-end": ["edge-b-2"], "db": ["edge-b-1"]}


def test_service_binds_unbound_pods_and_moves_out_of_a_bad_placement(tmp_path):
    app = load_app(REPO / "workloads/chain.json")
    profile = load_profile(REPO / "profiles/chain.reach-local.json")
    with fake_kube_cluster(tmp_path / ".harness") as cluster:
        deploy(cluster, app, BAD)
        cluster.apps.patch_namespaced_deployment_scale("db", "harness", {"spec": {"replicas": 2}})  # as kubectl scale
        policy = build("reach", model=str(REPO / "models/reach-chain.pt"))
        view_before = cluster.pods()
        log = io.StringIO()
        totals = run_service(cluster, profile, policy, period_s=0.1, max_moves=10, rounds=2,
                             on_event=json_events(log))
        after = cluster.pods()
        unbound = cluster.unbound_counts()
        events = [json.loads(line) for line in log.getvalue().splitlines()]
    assert totals["bound"] == 1 and unbound == {}
    assert sum(p.service == "db" for p in after) == 2 and len(after) == 5
    bound = next(e for e in events if e["event"] == "bound")
    assert len(bound["pods"]) == 1 and bound["nodes"][0] != "client-a-1"
    moves = [e for e in events if e["event"] == "move"]
    assert totals["moves"] == len(moves) >= 1
    assert all(m["predicted_after_ms"] < m["predicted_before_ms"] + 5 for m in moves)
    assert moves[-1]["predicted_after_ms"] < moves[0]["predicted_before_ms"]
    assert {e["event"] for e in events} >= {"start", "bound", "move", "stop"}
    assert len(view_before) == 4
    assert {p.node for p in after} != {p.node for p in view_before}


def test_a_terminating_pods_room_is_held_in_the_view(tmp_path):
    """A pod on its way out is no replica in the policies' view, but its node's room stays taken
    (kube-scheduler counts a terminating pod's requests; a pod bound into that room would be
    refused by the kubelet)."""
    from harness.rescheduler.live import LiveView

    app = load_app(REPO / "workloads/chain.json")
    profile = load_profile(REPO / "profiles/chain.reach-local.json")
    with fake_kube_cluster(tmp_path / ".harness") as cluster:
        deploy(cluster, app, BAD)
        live = LiveView(app, profile, cluster.state, cluster)
        before, _ = live.view()
        ml = next(p for p in cluster.pods() if p.service == "ml")
        cluster.retire_pod(ml)
        after, pods = live.view()
    node = after.node(ml.node)
    assert ml.name not in pods and len(after.pods) == len(before.pods) - 1
    assert node.background_cpu == app.cpu_request("ml") and node.background_memory_mib == app.memory_request("ml")
    assert node.used_cpu == before.node(ml.node).used_cpu  # the room is still taken
