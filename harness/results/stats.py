"""How sure a measured number is: the confidence interval of a mean over seeds, of the
difference of two such means (Welch), of a mean over a run of queued requests (batch means), of
a prediction's paired error over those requests, and the equivalence test the fidelity bars use."""

from __future__ import annotations

import numpy as np

# Student's t, two-sided 95 %, by degrees of freedom (beyond 30: the normal's 1.96)
T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
       2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def mean_ci95(values: list[float]) -> tuple[float, float | None]:
    """Mean and the half-width of its 95 % confidence interval (None for a single value)."""
    v = np.asarray(values, float)
    if len(v) < 2:
        return float(v.mean()), None
    return float(v.mean()), float(t95(len(v) - 1) * v.std(ddof=1) / np.sqrt(len(v)))


def t95(df: int) -> float:
    """Student's t, two-sided 95 %, for ``df`` degrees of freedom (at least 1)."""
    return T95[df - 1] if df <= len(T95) else 1.96


def difference_ci95(a: list[float], b: list[float]) -> tuple[float, float | None]:
    """mean(a) − mean(b) and the half-width of its 95 % interval by Welch (unequal variances;
    the degrees of freedom rounded down, so the interval errs wide). None with a single value on
    a side or no spread on either."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    diff = float(a.mean() - b.mean())
    if len(a) < 2 or len(b) < 2:
        return diff, None
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    if va + vb == 0:
        return diff, None
    df = int((va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1)))
    return diff, float(t95(max(df, 1)) * np.sqrt(va + vb))


def relative_difference_ci95(a: list[float], b: list[float]) -> tuple[float, float | None]:
    """``difference_ci95`` in % of mean(b): (a − b, the half-width of its 95 % interval)."""
    diff, half = difference_ci95(a, b)
    base = float(np.mean(np.asarray(b, float)))
    return 100 * diff / base, None if half is None else 100 * half / base


def batch_means_ci95(times, values, batches: int = 10, min_batch_s: float = 5.0) -> float | None:
    """The half-width of a 95 % confidence interval for the mean of a time series of correlated
    values (latencies of requests sent at ``times``, s): the interval is cut into ``batches``
    equal spans of at least ``min_batch_s`` (fewer when it is short; 10 is the low end of the
    10-30 batches Schmeiser (1982) recommends for a run of fixed length), and the spread of the
    batch means gives the width. Requests one after another wait in the same queue, so their
    plain standard error is far too narrow under load; batch means are not. None with fewer than
    two non-empty batches."""
    t, v = np.asarray(times, float), np.asarray(values, float)
    if len(t) < 2:
        return None
    span = float(t.max() - t.min())
    k = min(batches, int(span // min_batch_s))
    if k < 2:
        return None
    which = np.minimum(((t - t.min()) / span * k).astype(int), k - 1)
    count = np.bincount(which, minlength=k)
    means = np.bincount(which, weights=v, minlength=k)[count > 0] / count[count > 0]
    return mean_ci95(means)[1] if len(means) >= 2 else None


def within_bar(predicted: float, measured: float, half: float | None, bar: float) -> bool | None:
    """Is ``predicted`` within ``bar`` (a share: 0.15) of the true mean, of which ``measured`` ±
    ``half`` is a 95 % confidence interval? True when it is for every mean in the interval, False
    when it is for none, None (undecided: the measurement is too noisy for the bar) otherwise —
    an equivalence test, not a point comparison."""
    if half is None:
        return None
    lo, hi = measured - half, measured + half
    worst_low = (predicted - hi) / hi  # the relative error falls as the true mean rises
    worst_high = (predicted - lo) / lo if lo > 0 else np.inf
    if -bar <= worst_low and worst_high <= bar:
        return True
    if worst_low > bar or worst_high < -bar:
        return False
    return None


def paired_error(times_s, measured_ms, predicted_ms) -> tuple[float, float, float | None]:
    """(measured mean, predicted mean, half-width of the 95 % interval of their difference): the
    interval from batch means over the per-request differences, which the trace's bursts mostly
    cancel out of (``batch_means_ci95``)."""
    m, p = np.asarray(measured_ms, float), np.asarray(predicted_ms, float)
    return float(m.mean()), float(p.mean()), batch_means_ci95(times_s, m - p)


def spearman(a, b) -> float:
    """Spearman's rank correlation of two equally long sequences (ties broken by order)."""
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(ra, rb)[0, 1])


def kendall_tau(a, b) -> float:
    """Kendall's τ-b of two equally long sequences: (concordant − discordant) pairs over the pairs
    not tied, as scipy.stats.kendalltau computes it."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    i, j = np.triu_indices(len(a), 1)
    da, db = np.sign(a[i] - a[j]), np.sign(b[i] - b[j])
    n0 = len(i)
    ta, tb = int((da == 0).sum()), int((db == 0).sum())
    denom = np.sqrt((n0 - ta) * (n0 - tb))
    return float((da * db).sum() / denom) if denom else float("nan")


def ks_distance(a, b) -> float:
    """The two-sample Kolmogorov-Smirnov distance: the largest gap between the empirical CDFs."""
    a, b = np.sort(np.asarray(a, float)), np.sort(np.asarray(b, float))
    if not len(a) or not len(b):
        return float("nan")
    grid = np.concatenate([a, b])
    return float(np.max(np.abs(np.searchsorted(a, grid, side="right") / len(a)
                               - np.searchsorted(b, grid, side="right") / len(b))))
