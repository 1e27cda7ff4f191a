"""The Gini coefficient in n log n: the same number as over every pair, to the last bit on counts."""

from __future__ import annotations

import numpy as np
import pytest

from harness.results.placement_metrics import gini


def pairwise(x) -> float:
    x = np.asarray(x, float)
    return float(np.abs(x[:, None] - x[None, :]).sum() / (2 * len(x) ** 2 * x.mean()))


@pytest.mark.parametrize("seed", range(30))
def test_gini_is_the_pairs_sum(seed):
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 30, int(rng.integers(1, 400)))
    counts[0] += 1
    assert gini(counts) == pairwise(counts)
    x = rng.random(int(rng.integers(1, 200)))
    assert gini(x) == pytest.approx(pairwise(x), rel=1e-12)


def test_gini_edges():
    assert gini([]) == 0.0 and gini([0, 0]) == 0.0 and gini([5, 5, 5]) == 0.0
    assert gini([0, 0, 0, 9]) == pytest.approx(0.75)
