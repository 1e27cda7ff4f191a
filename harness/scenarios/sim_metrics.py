"""A simulated run's ``metrics.csv``: per pod, every ``PERIOD_S`` of the run (as the live run pulls
Prometheus), the columns the live run writes (``results.rundir.METRIC_FIELDS``), from the model the
requests' latencies came from, so that a simulated run's CPU and load per pod can be read, plotted
and compared as a live run's.

Each request answered in a placement interval (``simrun.Interval``) visits service s v_s times
(``sim.queueing.visits``), its replicas sharing the visits equally (round robin). A visit of s on
node n

- costs E[s, n] ms of CPU (the model's work: ``cpu_s``, and ``cpu_cores`` over the pull's period);
- spends W[s, n] ms in its job (``internal_ms``): the loaded time — the closed network's with the
  loop's users (mean value analysis), else node-ps at the open rate (a trace: at the rate its
  requests came in the interval); E where that saturates or one user runs;
- and T_S[s] − T_E[s] ms in its calls (``external_ms``; ``request_ms`` the two together), the
  model's terms with those loaded times.

Requests that failed or timed out are left out (live, their pods' counters see part of them). A
pod's running totals start at 0 when it first serves; a pull lists the pods serving at its time.
The CPU is the jobs' alone: a cell's own serving work, which live ``cpu_s`` counts too, is not in
the model.
"""

from __future__ import annotations

import numpy as np

from harness.scenarios.run import closed_users, open_rate

PERIOD_S = 5.0  # as LiveRun.metrics_loop pulls
TOTALS = ("requests", "internal_ms", "external_ms", "request_ms", "cpu_s")


def per_visit(interval, sc, rate: float | None) -> dict[str, np.ndarray]:
    """Per pod of the interval: [visits, job ms, call ms, request ms, CPU s] per request sent."""
    from harness.sim.queueing import QueueingModel, loaded_execution, visits

    model, X = interval.model, np.asarray(interval.X, float)
    users, open_now = closed_users(sc, max(0.0, interval.t_run)), open_rate(sc, max(0.0, interval.t_run))
    if users is not None and users > 1:
        W = loaded_execution(model, X, users, closed=True)
    elif users is None and (open_now or rate):
        W = QueueingModel(model).sojourn_ms(X, open_now or rate)
    else:
        W = model.E
    W = np.where(np.isfinite(W), W, model.E)
    terms = model.terms(X, E=W)
    calls = terms["T_S"][0] - terms["T_E"][0]
    v, replicas, col = visits(model), X.sum(axis=1), {n: k for k, n in enumerate(model.topo.nodes)}
    out = {}
    for name, service, node in interval.pods:
        s, n = model.index[service], col[node]
        share = v[s] / replicas[s]
        out[name] = share * np.array([1.0, W[s, n], calls[s], W[s, n] + calls[s], model.E[s, n] / 1000])
    return out


def pulls(intervals: list, answered: np.ndarray, sc) -> list[tuple[float, list[tuple]]]:
    """(t_run of the pull, its rows) every PERIOD_S from PERIOD_S to the run's end; ``answered``:
    the sorted send times (t_run) of the requests answered."""
    starts = [max(0.0, i.t_run) for i in intervals] + [np.inf]
    totals: dict[str, np.ndarray] = {}
    cached: dict[int, dict[str, np.ndarray]] = {}
    out, prev = [], 0.0
    for b in np.arange(PERIOD_S, sc.duration_s + 1e-9, PERIOD_S):
        before = {pod: v.copy() for pod, v in totals.items()}
        for i, interval in enumerate(intervals):
            lo, hi = max(prev, starts[i]), min(b, starts[i + 1])
            if hi <= lo or (np.asarray(interval.X).sum(axis=1) == 0).any():
                continue
            n = int(np.searchsorted(answered, hi, "left") - np.searchsorted(answered, lo, "left"))
            if not n:
                continue
            if i not in cached:
                end = min(starts[i + 1], sc.duration_s)
                count = np.searchsorted(answered, end, "left") - np.searchsorted(answered, starts[i], "left")
                cached[i] = per_visit(interval, sc, count / (end - starts[i]) if end > starts[i] else None)
            for name, _, _ in interval.pods:
                totals[name] = totals.get(name, np.zeros(len(TOTALS))) + n * cached[i][name]
        now = intervals[max(0, int(np.searchsorted(starts[:-1], b, "right")) - 1)]
        rows = []
        for name, service, node in now.pods:
            total = totals.get(name, np.zeros(len(TOTALS)))
            was = before.get(name, np.zeros(len(TOTALS)))
            rows.append((name, service, node, round(float(total[4] - was[4]) / PERIOD_S, 4),
                         round(float(total[0] - was[0]) / PERIOD_S, 3), *(round(float(x), 3) for x in total)))
        out.append((float(b), rows))
        prev = b
    return out
