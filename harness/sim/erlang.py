"""M/M/c queues (Erlang C): the one definition both queueing models use (``sim.queueing``'s
erlang-c discipline, SIL-GPO's service-graph world ``families.silgpo.world``, eqs. 35-37)."""

from __future__ import annotations

from math import factorial

import numpy as np


def erlang_c_wait(c: int, a: float) -> float:
    """Erlang C: the probability an arrival waits in M/M/c with offered load a = λ/μ < c."""
    top = a ** c / factorial(c) * c / (c - a)
    return top / (sum(a ** k / factorial(k) for k in range(c)) + top)


def mmc_sojourn(c: np.ndarray, lam: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """W = C(c, λ/μ) / (cμ − λ) + 1/μ, the mean time in an M/M/c queue and its service,
    elementwise over arrays (each queue stable: λ < cμ)."""
    c, lam, mu = (np.asarray(v, float) for v in (c, lam, mu))
    a = lam / mu
    term, below = np.ones_like(a), np.zeros_like(a)
    for k in range(int(c.max(initial=0))):  # Σ_{k<c} a^k / k!, leaving term = a^c / c!
        below += np.where(k < c, term, 0.0)
        term = np.where(k < c, term * a / (k + 1), term)
    top = term * c / (c - a)
    return top / (below + top) / (c * mu - lam) + 1 / mu
