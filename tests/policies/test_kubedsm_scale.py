"""KubeDSM on a large edge: the match runs over a few nodes of each class of nodes alike and
still finds the best value over every node; placing two thousand pods on a thousand-node
continuum places them all."""

from __future__ import annotations

import numpy as np
import pytest

from harness.families.kubedsm.match import Match, _match, node_value


def full_value(counts, req, used, cap, limit):
    """The programme over every node (no class left out): per sub-vector, the best value."""
    return _match(np.asarray(counts, np.int64), req, used, cap, limit)[0]


@pytest.mark.parametrize("seed", range(10))
def test_classes_of_alike_nodes_give_the_best_value_over_every_node(seed):
    rng = np.random.default_rng(seed)
    S, kinds = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    caps = rng.integers(3, 9, (kinds, 2)).astype(float)
    which = rng.integers(0, kinds, int(rng.integers(20, 60)))  # many nodes, few kinds
    cap = caps[which]
    used = np.where(rng.random((len(which), 1)) < 0.3, np.floor(cap * 0.4), 0.0)  # some half used, most empty
    counts = rng.integers(0, 3, S)
    counts[0] += 1
    req = rng.integers(1, 3, (S, 2)).astype(float)
    limit = np.where(rng.random((kinds, S)) < 0.2, 1, 99).astype(np.int64)[which]  # constraints per kind
    m = Match(counts, req, used, cap, limit)
    assert len(m.kept) <= 2 * kinds * counts.sum() < len(which) or len(m.kept) == len(which)
    want = full_value(counts, req, used, cap, limit)
    assert np.allclose(m.value, want, rtol=0, atol=1e-9) and np.array_equal(m.fits(), want > -np.inf)
    for c in np.flatnonzero(m.fits()):
        arr = m.nodes(c)
        after = used + arr @ req
        assert (arr.sum(axis=0) == m.vectors[c]).all() and np.all(after <= cap + 1e-9) and np.all(arr <= limit)
        assert sum(node_value(after[e], cap[e]) for e in range(len(cap))) == pytest.approx(m.value[c])


def test_kubedsm_places_two_thousand_pods_on_a_thousand_nodes():
    from harness.policies import build
    from tests.generators.world import generated_view

    view, pods = generated_view(1000, 60, 2000)
    placed = build("kubedsm").place(view, pods)
    assert len(placed) == 2000 and None not in placed
    for pod, node in zip(pods, placed):
        view = view.with_pod(pod, node)
    assert np.all(view.used_cpu <= view.cap_cpu + 1e-9)


@pytest.mark.parametrize("form", ["code", "paper"])
def test_the_qos_of_every_sub_vector_at_once_is_the_qos_of_each(form):
    from harness.families.kubedsm.kubedsm import Edge, KubeDSMArgs, KubeDSMCore
    from tests.generators.world import generated_view

    view, pods = generated_view(40, 6, 30)
    core = KubeDSMCore(KubeDSMArgs(qos=form, promised="s1=0.5,s2=0.3"))
    st = Edge(view)
    rng = np.random.default_rng(0)
    total = rng.integers(0, 6, len(st.services))
    rows = np.minimum(rng.integers(0, 6, (200, len(st.services))), total)
    many = core.qos_many(st, rows, total)
    assert [float(q) for q in many] == [core.qos(st, r, total) for r in rows]  # to the last bit
