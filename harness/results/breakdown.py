"""Where the time goes: for each placement a run held, the model's terms next to what the cells
measured, so a user sees which part of the simulator is wrong.

The cells' running totals (``metrics.csv``: requests, and milliseconds in the internal job, the
external calls and the whole request, per pod) differ between two pulls by what the interval
served. Per service that gives the measured execution time (against the model's T_E), call time
(against T_S − T_E) and processing time (against T_S). Two more parts follow by subtraction:

- a call: the caller's external time less its callees' own processing time, per call — the
  network and HTTP time of one call, against the model's D_S. Only for a caller with one group
  (in a parallel group the slowest call hides the others) whose callees nobody else calls;
- the gateway: the client's latency less the entry service's processing time — the user's round
  trip and the client's own overhead, against the model's D_gateway.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from harness.results.collect import Run, held_intervals, ok_requests
from harness.results.rundir import TIME_TOTALS, TOTALS
from harness.spec.app import App

# the parts of the model, in the order a request meets them
PARTS = ("end-to-end", "gateway", "service", "execution", "calls", "call")


def _totals_at(metrics: pd.DataFrame, t: float) -> pd.DataFrame:
    """Per pod, its totals at the pull taken at time ``t`` (service and node kept)."""
    return metrics[metrics.t == t].drop_duplicates("pod").set_index("pod")


def interval_totals(metrics: pd.DataFrame, start: float, stop: float,
                    columns: tuple[str, ...] = TIME_TOTALS) -> tuple[pd.DataFrame, float, float] | None:
    """What each pod served between the first pull at or after ``start`` and the last at or
    before ``stop``: (per pod service, node and the ``columns`` totals' differences, from, to); None
    when fewer than two pulls fall inside. A pod first seen after the first pull counts from zero."""
    times = np.sort(metrics.t.unique())
    inside = times[(times >= start) & (times <= stop)]
    if len(inside) < 2:
        return None
    a, b = float(inside[0]), float(inside[-1])
    first, last = _totals_at(metrics, a), _totals_at(metrics, b)
    seen_before = set(metrics[metrics.t <= a].pod)
    rows = []
    for pod, end in last.iterrows():
        if any(math.isnan(float(end[k])) for k in columns):
            continue  # not scraped yet
        base = first.loc[pod] if pod in first.index else None
        if base is None and pod in seen_before:
            continue  # gone from the first pull but back later: not one pod's history
        diff = {k: float(end[k]) - (0.0 if base is None or math.isnan(float(base[k])) else float(base[k])) for k in columns}
        rows.append({"pod": pod, "service": end.service, "node": end.node, **diff})
    return pd.DataFrame(rows, columns=["pod", "service", "node", *columns]), a, b


def node_busy(metrics: pd.DataFrame, start: float, stop: float, cores: dict[str, float]) -> dict[str, float] | None:
    """Per node, the share of its CPU its pods kept busy between ``start`` and ``stop`` (the cells'
    process CPU time over the interval, over the node's ``cores``): the utilisation ρ a queueing
    model predicts, measured. It counts all of a cell's work, its HTTP serving too, not only
    the jobs the model's execution times time. None when fewer than two pulls fall inside."""
    got = interval_totals(metrics, start, stop, TOTALS)
    if got is None:
        return None
    pods, a, b = got
    per = pods.groupby("node").cpu_s.sum()
    return {n: float(per.get(n, 0.0)) / (b - a) / c for n, c in cores.items()}


def _callers(app: App) -> dict[str, set[str]]:
    callers: dict[str, set[str]] = {s: set() for s in app.services}
    for s, spec in app.services.items():
        for g in spec.external_services:
            for c in g.services:
                callers[c].add(s)
    return callers


def breakdown(run: Run, app: App, min_requests: int = 5) -> list[dict]:
    """Per placement held (with a recorded prediction breakdown and ≥ two metric pulls): the
    measured and predicted time of every part. Rows: part, name, requests, predicted_ms, measured_ms."""
    if run.metrics is None or run.requests is None or not set(TIME_TOTALS) <= set(run.metrics.columns):
        return []
    out = []
    callers = _callers(app)
    entries = app.entry_services()
    ok = ok_requests(run)
    t0 = run.t0 or 0.0
    for p, start, _, _, bound in held_intervals(run, min_requests):
        pred = p.get("predicted")
        if not pred:
            continue
        got = interval_totals(run.metrics, start, bound)
        if got is None:
            continue
        pods, a, b = got
        sent = ok[(ok.t_send >= a) & (ok.t_send < b)]
        if len(sent) < min_requests or pods.requests.sum() <= 0:
            continue
        per = pods.groupby("service")[list(TIME_TOTALS)].sum()
        served = {s: float(per.requests.get(s, 0.0)) for s in app.services}

        def mean(s: str, col: str) -> float | None:
            return float(per.loc[s, col]) / served[s] if served.get(s, 0) > 0 else None

        rows = [("end-to-end", "", len(sent), pred["latency_ms"], float(sent.latency_ms.mean()))]
        for s, sp in pred["services"].items():
            if not served.get(s):
                continue
            calls_pred = sp["T_S_ms"] - sp["T_E_ms"]
            rows += [("service", s, served[s], sp["T_S_ms"], mean(s, "request_ms")),
                     ("execution", s, served[s], sp["T_E_ms"], mean(s, "internal_ms"))]
            if app.services[s].external_services:
                rows.append(("calls", s, served[s], calls_pred, mean(s, "external_ms")))
        d_s = {(e["caller"], e["callee"]): e["D_S_ms"] for e in pred["edges"]}
        for s, spec in app.services.items():
            groups = [g for g in spec.external_services if g.services]
            if len(groups) != 1 or not served.get(s) or any(callers[c] != {s} for c in groups[0].services):
                continue
            g = groups[0]
            made = {c: served.get(c, 0.0) / served[s] for c in g.services}  # calls per request of s
            n = sum(made.values())
            if n <= 0 or any(made[c] > 0 and mean(c, "request_ms") is None for c in g.services):
                continue
            own = sum(made[c] * mean(c, "request_ms") for c in g.services if made[c] > 0)
            weight = {c: g.probabilities.get(c, 1.0) for c in g.services}
            pred_call = sum(weight[c] * d_s[(s, c)] for c in g.services) / sum(weight.values())
            rows.append(("call", f"{s} → {', '.join(g.services)}", served[s] * n, pred_call,
                         (mean(s, "external_ms") - own) / n))
        gw = []
        for e in entries:
            mine = sent[sent.entry == e] if (sent.entry != "").any() else sent
            if len(mine) and served.get(e):
                gw.append((len(mine), float(mine.latency_ms.mean()) - mean(e, "request_ms")))
        if gw:
            measured = sum(n * v for n, v in gw) / sum(n for n, _ in gw)
            rows.append(("gateway", "", sum(n for n, _ in gw), pred["gateway_ms"], measured))
        for part, name, n, predicted, measured in rows:
            if measured is None:
                continue
            out.append({"run": run.label, "policy": run.policy, "from_s": round(a - t0, 1), "to_s": round(b - t0, 1),
                        "part": part, "name": name, "requests": int(round(n)), "predicted_ms": round(predicted, 3),
                        "measured_ms": round(measured, 3), "error_ms": round(predicted - measured, 3)})
        for r in pods.itertuples():  # per pod's node: what calibration fits execution times from
            if r.requests > 0:
                out.append({"run": run.label, "policy": run.policy, "from_s": round(a - t0, 1),
                            "to_s": round(b - t0, 1), "part": "execution-on-node", "name": f"{r.service}@{r.node}",
                            "requests": int(r.requests), "predicted_ms": None,
                            "measured_ms": round(r.internal_ms / r.requests, 3), "error_ms": None})
    return out


def per_run(rows: list[dict]) -> pd.DataFrame:
    """Each run's parts over all its intervals, weighted by the requests each interval served."""
    df = pd.DataFrame([r for r in rows if r["part"] in PARTS])
    if df.empty:
        return df
    df["wp"] = df.predicted_ms * df.requests
    df["wm"] = df.measured_ms * df.requests
    g = df.groupby(["run", "part", "name"], sort=False).agg(requests=("requests", "sum"), wp=("wp", "sum"),
                                                           wm=("wm", "sum")).reset_index()
    g["predicted_ms"] = (g.wp / g.requests).round(2)
    g["measured_ms"] = (g.wm / g.requests).round(2)
    g["error_ms"] = (g.predicted_ms - g.measured_ms).round(2)
    g["error_pct"] = (100 * g.error_ms / g.measured_ms).round(1)
    g["order"] = g.part.map({p: i for i, p in enumerate(PARTS)})
    return g.sort_values(["run", "order", "name"], kind="stable").drop(columns=["wp", "wm", "order"])
