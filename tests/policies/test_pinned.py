"""The pinned placer: pods where the placement says, the default scheduler beyond it."""

from __future__ import annotations

import pytest

from harness.errors import UserError
from harness.policies import build
from harness.policies.contract import ClusterView, PendingPod
from harness.policies.pinned import Pinned, PinnedArgs
from harness.rescheduler.evaluate import SimWorld, scenario
from harness.sim.ceenv import Dynamics, EnvConfig, default_model


@pytest.fixture(scope="module")
def view() -> ClusterView:
    dyn = Dynamics(default_model(None, None), EnvConfig())
    st = scenario(dyn, 4, 0)
    st.bg_cpu[:] = 0
    st.bg_mem[:] = 0
    return SimWorld(dyn, st).view()


def test_pods_go_where_the_placement_says_then_the_default_decides(view):
    pinned = Pinned(PinnedArgs(placement={"ml": ["edge-b-2", "cloud-a-1"], "db": ["edge-a-1"]}))
    pods = [PendingPod("ml", 0.5, 256.0, f"ml#{i}") for i in range(3)] + [PendingPod("db", 0.5, 256.0, "db#0")]
    got = pinned.place(view, pods)
    assert got[:2] == ["edge-b-2", "cloud-a-1"] and got[3] == "edge-a-1"
    assert got[2] == build("default").place(view.with_pod(pods[0], "edge-b-2").with_pod(pods[1], "cloud-a-1"),
                                            [pods[2]])[0]  # the third ml pod: beyond the placement


def test_a_placement_naming_what_is_not_there_is_refused(view):
    with pytest.raises(UserError, match="no node pods may run on"):
        Pinned(PinnedArgs(placement={"ml": ["client-a-1"]})).check(view)
    with pytest.raises(UserError, match="does not have"):
        Pinned(PinnedArgs(placement={"nope": ["edge-a-1"]})).check(view)
