"""Per-request variability: each request's execution times drawn around the profile's means, so
that a simulated run has a latency distribution (a p95 above the mean, seeds that differ) and not
one number per placement.

A job of service s on node n takes E[s, n] × F ms, F drawn from a gamma distribution with mean 1
and the coefficient of variation the profile measured for that service on that node's type
(``Timing.std_ms / mean_ms``; 0 where it measured none, as a calibrated profile that kept no
spread: then F = 1 and the run is as before). A request's latency is REACH's model (eqs. 2-9)
with its own draw of every job time (``ratios``: the draw's D_msa over the mean's), so in a
closed loop under load each request takes the queueing model's mean for the users running times
that ratio; an open loop's replay (``sim.trace_replay``) draws each job's time itself.
"""

from __future__ import annotations

import numpy as np

from harness.sim.latency import LatencyModel
from harness.spec.profile import Profile


def cv_matrix(model: LatencyModel, profile: Profile | None) -> np.ndarray:
    """(S, N) the coefficient of variation of each service's execution time on each node (its
    type's, in the profile); zeros without a profile."""
    cv = np.zeros((model.S, len(model.topo.nodes)))
    if profile is None:
        return cv
    for i, s in enumerate(model.services):
        by_type = profile.services.get(s, {})
        for n, t in enumerate(model.topo.node_types):
            timing = by_type.get(t)
            if timing is not None and timing.mean_ms > 0:
                cv[i, n] = timing.std_ms / timing.mean_ms
    return cv


def job_factors(rng: np.random.Generator, cv: np.ndarray, size: tuple[int, ...] = ()) -> np.ndarray:
    """Multipliers of mean 1 and coefficient of variation ``cv`` (gamma), shape ``size + cv.shape``;
    exactly 1 where cv is 0."""
    cv = np.asarray(cv, float)
    shape = np.where(cv > 0, 1.0 / np.maximum(cv, 1e-9) ** 2, 1.0)
    draws = rng.gamma(np.broadcast_to(shape, size + cv.shape), 1.0 / shape)
    return np.where(cv > 0, draws, 1.0)


class RequestSpread:
    """Each request's latency relative to the placement's mean: D_msa with its own job times."""

    CHUNK = 512

    def __init__(self, cv: np.ndarray, rng: np.random.Generator):
        self.cv, self.rng = cv, rng
        self.any = bool((cv > 0).any())

    def ratios(self, model: LatencyModel, X: np.ndarray, n: int) -> np.ndarray:
        """``n`` ratios (mean about 1) of a request's latency to the model's for placement ``X``."""
        if not self.any or n == 0:
            return np.ones(n)
        base = float(model.latency(X)[0])
        out = []
        for k in range(0, n, self.CHUNK):
            m = min(self.CHUNK, n - k)
            E = model.E[None] * job_factors(self.rng, self.cv, (m,))
            out.append(model.terms(np.repeat(np.asarray(X, float)[None], m, axis=0), E=E)["D_msa"] / base)
        return np.concatenate(out)
