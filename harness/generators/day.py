"""A day of arrivals in the shape published for serverless traffic, as a scenario's load steps.

Shahrad et al., "Serverless in the Wild: Characterizing and Optimizing the Serverless Workload
at a Large Cloud Provider", USENIX ATC'20, Fig. 5 (invocations per hour over Azure Functions'
platform): a clear diurnal (and weekly) pattern over a constant baseline of about half the
invocations that shows no variation; invocation rates span 8 orders of magnitude between
functions, most functions being invoked rarely and in bursts.

The rate here: ``mean`` × (``baseline`` + (1 − ``baseline``) × (1 + cos 2π(h − ``peak_hour``)/24)),
so half of it constant and the other half following the day, a peak three times the trough; each
step (``step_s``) multiplied by a lognormal factor (σ ``noise``) and, with probability
``burst_p``, by a burst ×2-×5. The noise and bursts are this generator's, not fitted to the trace.
The steps are scaled so their mean over the run is ``mean`` exactly. ``duration_s`` plays the
day's shape over any length (a day in an hour: 3600).

``day_steps`` gives the steps; ``scenario`` wraps them in an open-loop load of a scenario.
"""

from __future__ import annotations

import math

import numpy as np

DAY_S = 86400.0


def day_steps(mean: float, seed: int = 0, duration_s: float = DAY_S, step_s: float = 300.0, baseline: float = 0.5,
              peak_hour: float = 14.0, noise: float = 0.2, burst_p: float = 0.03) -> list[dict]:
    """[{at_s, value}] every ``step_s`` over ``duration_s``: requests/s with mean ``mean``."""
    if mean <= 0 or duration_s <= 0 or step_s <= 0:
        raise ValueError("mean, duration_s and step_s must be > 0")
    if not 0 <= baseline <= 1:
        raise ValueError("baseline is a share of the rate, within [0, 1]")
    rng = np.random.default_rng(seed)
    starts = np.arange(0.0, duration_s, step_s)
    hours = (starts + step_s / 2) / duration_s * 24.0  # the day's shape over the run's length
    shape = baseline + (1 - baseline) * (1 + np.cos(2 * math.pi * (hours - peak_hour) / 24))
    rate = shape * rng.lognormal(-noise ** 2 / 2, noise, len(starts))
    rate *= np.where(rng.random(len(starts)) < burst_p, rng.uniform(2, 5, len(starts)), 1.0)
    widths = np.minimum(starts + step_s, duration_s) - starts
    rate *= mean * duration_s / float((rate * widths).sum())
    return [{"at_s": round(float(a), 3), "value": round(float(v), 4)} for a, v in zip(starts, rate)]


def scenario(app: str, mean: float, seed: int = 0, name: str = "day", duration_s: float = DAY_S,
             step_s: float = 300.0, rescheduler_period_s: float = 300.0, max_moves: int = 10, **shape) -> dict:
    """A scenario document: the app (a path or a shipped name), one open-loop load of
    ``day_steps``, the rescheduler every ``rescheduler_period_s``. Its requests limit is raised to
    what the load sends when that is above the default (knowingly: it is the point)."""
    steps = day_steps(mean, seed, duration_s, step_s, **shape)
    requests = mean * duration_s
    doc = {"name": name, "description": f"a day's load in the shape of Azure Functions' (Shahrad et al. ATC'20), "
                                        f"mean {mean:g} requests/s over {duration_s:g} s, seed {seed}",
           "duration_s": duration_s, "app": app, "warmup_s": 0,
           "load": {"mode": "open", "steps": steps},
           "rescheduler": {"period_s": rescheduler_period_s, "start_s": min(rescheduler_period_s, duration_s / 2),
                           "max_moves": max_moves}}
    limits = {}
    if requests > 100_000 * 0.9:
        limits["requests"] = int(math.ceil(requests * 1.2))
    peak = max(s["value"] for s in steps)
    if peak > 10_000:
        limits["rate_per_s"] = float(math.ceil(peak))
    if duration_s > 7 * DAY_S:
        limits["duration_s"] = duration_s
    if limits:
        doc["limits"] = limits
    return doc
