"""A run's summary from its request log and events, and the comparison across runs."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from harness.results.stats import batch_means_ci95

COLUMNS = ("policy", "seed", "mean_ms", "p50_ms", "p95_ms", "p99_ms", "under_threshold", "rps", "errors",
           "moves", "moved_share", "recovery_s", "edge_ratio", "cost", "rejection_rate", "cost_delay_objective",
           "cost_delay_gap")
# a run with deployment requests (a request stream) adds HephaestusForge's measures
ADMISSION_COLUMNS = ("request_rejection_rate", "replica_cost", "gini_sites")
# runs of a family's own world (harness.scenarios.world_run: nothing moves, no pods) have the
# latency columns and their model's expectation
WORLD_COLUMNS = ("policy", "seed", "mean_ms", "p50_ms", "p95_ms", "p99_ms", "under_threshold", "rps", "errors",
                 "expected_ms")


def had_requests(rows: list[dict]) -> bool:
    """Whether a run had deployment requests (a request stream)."""
    return any((r.get("metrics") or {}).get("requests_arrived") is not None for r in rows)


def columns(rows: list[dict]) -> tuple[str, ...]:
    """The comparison's columns for these runs: COLUMNS, and ADMISSION_COLUMNS after a request
    stream; WORLD_COLUMNS when every run is of a family's own world."""
    if rows and all(r.get("scenario_world") for r in rows):
        return WORLD_COLUMNS
    return COLUMNS + ADMISSION_COLUMNS if had_requests(rows) else COLUMNS


def value(row: dict, column: str):
    """A column of the comparison: the summary's own field, or one of its placement metrics."""
    if column in row:
        return row[column]
    metrics = row.get("metrics") or {}
    if column.startswith("cost_delay_"):  # paper 003's objective and gap, when the run's app is its problem
        return (metrics.get("cost_delay") or {}).get(column.removeprefix("cost_delay_"))
    return metrics.get(column)


OK_STATUS = 200


def is_ok(status, error: str) -> bool:
    """An OK request: HTTP 200 and no error (a reply cut short, or none at all, is not OK). The one
    definition; ``ok_mask`` is the same rule over a table of requests."""
    return str(status) == str(OK_STATUS) and error == ""


def ok_mask(df):
    return (df.status == OK_STATUS) & (df.error.astype(str) == "")


def read_requests(path: Path):
    """A run's requests (a run directory: every load's log together; or one log file), with their
    entry service (logs written before loads had entries: empty). Whole rows only: what a log's
    writer left cut (it stopped mid-row) is skipped, one line per log in ``df.attrs["skipped"]``."""
    import io

    import pandas as pd

    from harness.results.csvfile import complete_rows, dropped_rows
    from harness.results.rundir import request_files

    files = request_files(path) if path.is_dir() else [path]
    if not files:
        raise FileNotFoundError(f"no request log in {path}")
    frames, skipped = [], []
    for f in files:
        text, cut, malformed = complete_rows(f)
        if (line := dropped_rows(f, cut, malformed)) is not None:
            skipped.append(line)
        frames.append(pd.read_csv(io.StringIO(text), dtype={"error": "string", "pod": "string", "entry": "string"},
                                  keep_default_na=False))
    df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    if "entry" not in df.columns:
        df["entry"] = ""
    if len(frames) > 1:
        df = df.sort_values("t_send", kind="stable").reset_index(drop=True)
    df.attrs["skipped"] = skipped
    return df


def in_window(requests, t_start: float, t_end: float, warmup_s: float):
    """The requests a summary counts: sent after the warm-up and by the run's end, and finished
    (an ``unfinished`` row, in flight when the load ended, has no result; it is counted apart)."""
    return (requests.t_send >= t_start + warmup_s) & (requests.t_send <= t_end) & ~unfinished_mask(requests)


def unfinished_mask(df):
    from harness.loadgen import UNFINISHED

    return df.error.astype(str) == UNFINISHED


# a share of requests timed out or unfinished above which the run is said not to have kept up; one
# is always allowed: a closed loop's last request, cut short by the run's end, is no sign of falling
# behind (with fewer than 100 requests sent, 1 % would otherwise forbid it)
KEPT_UP = 0.01


def summarize(requests, t_start: float, t_end: float, warmup_s: float, threshold_ms: float) -> dict:
    """Latency over successful requests sent after the warm-up (the mean with its 95 % confidence
    half-width); errors and the share under the threshold over all of them (a failed request is
    not under any threshold)."""
    from harness.loadgen import TIMED_OUT

    df = requests[in_window(requests, t_start, t_end, warmup_s)]
    ok = df[ok_mask(df)]
    lat = ok.latency_ms.to_numpy(float)
    span = max(1e-9, t_end - (t_start + warmup_s))
    ci = batch_means_ci95(ok.t_send, lat)
    sent = (requests.t_send >= t_start + warmup_s) & (requests.t_send <= t_end)
    unfinished = int((sent & unfinished_mask(requests)).sum())
    timeouts = int((df.error.astype(str) == TIMED_OUT).sum())

    def q(p):
        return round(float(np.percentile(lat, p)), 3) if len(lat) else None

    return {
        "requests": int(len(df)), "errors": int(len(df) - len(ok)),
        "mean_ms": round(float(lat.mean()), 3) if len(lat) else None,
        "mean_ci95_ms": None if ci is None else round(ci, 3),  # batch means: queued requests are not independent
        "p50_ms": q(50), "p95_ms": q(95), "p99_ms": q(99), "max_ms": round(float(lat.max()), 3) if len(lat) else None,
        "under_threshold": round(float((lat < threshold_ms).sum() / len(df)), 4) if len(df) else None,
        "threshold_ms": threshold_ms, "rps": round(len(ok) / span, 3), "window_s": round(span, 3),
        "sent": int(sent.sum()), "sent_rps": round(float(sent.sum()) / span, 3), "timeouts": timeouts,
        "unfinished": unfinished, "kept_up": bool(timeouts + unfinished <= max(1.0, KEPT_UP * int(sent.sum()))),
    }


def request_stats(run: Path, t0: float, t_end: float, warmup_s: float, threshold_ms: float,
                  events: list[dict]) -> tuple[dict, object | None]:
    """A run directory's request log summarised over [t0 + warm-up, t_end] (each entry's apart
    when there are several), and the requests; an ``error`` field when there is no log. The one
    summary of a live or simulated run's requests, whatever its world."""
    try:
        req = read_requests(run)
        stats = summarize(req, t0, t_end, warmup_s, threshold_ms)
        stats["steady_state_errors"] = errors_outside(req, events, t0, t_end, warmup_s)
        if req.attrs.get("skipped"):  # a load's writer stopped mid-row: said, not silently read
            stats["request_log_skipped"] = req.attrs["skipped"]
        if req.entry.nunique() > 1:  # several entries: each one's latency apart
            stats["entries"] = {e: summarize(g, t0, t_end, warmup_s, threshold_ms) for e, g in req.groupby("entry")}
        return stats, req
    except (FileNotFoundError, ValueError, KeyError) as exc:
        return {"error": f"no request log: {exc}"}, None


def generator_busy_share(requests, t_start: float, t_end: float, warmup_s: float, users: float,
                         pause_s: float, no_endpoint: str) -> float | None:
    """Share of the closed-loop users' time spent waiting on the app (Little's law for a loop with
    no think time): near 1 means the generator adds no delay of its own. The deliberate pause after
    finding no replica is not the generator's overhead, so it leaves the denominator."""
    df = requests[in_window(requests, t_start, t_end, warmup_s)]
    if not users or df.empty:
        return None
    idle = df.error.str.contains(no_endpoint, regex=False)
    available = users * (t_end - (t_start + warmup_s)) - int(idle.sum()) * pause_s
    return round(float(df.latency_ms[~idle].sum() / 1000 / available), 4) if available > 0 else None


def errors_outside(requests, events: list[dict], t_start: float, t_end: float, warmup_s: float,
                   settle_s: float = 15.0) -> int:
    """Failed requests in steady state: after the warm-up and outside every disturbance's window
    (from a second before a fault to its ``window_s`` after; ``settle_s`` for events written
    before faults carried their window)."""
    from harness import events as catalogue, faults

    faults.load_all()  # fault kinds declare their events
    df = requests[in_window(requests, t_start, t_end, warmup_s)]
    bad = df[~ok_mask(df)]
    t = bad.t_send.to_numpy()
    keep = np.ones(len(bad), bool)
    for e in events:
        if e["kind"] in catalogue.disturbances():
            window = (e.get("detail") or {}).get("window_s", settle_s)
            keep &= ~((t >= e["t"] - 1) & (t <= e["t"] + window))
    return int(keep.sum())


def write_comparison(rows: list[dict], out: Path) -> str:
    """CSV and Markdown of one row per run, plus the mean per policy; returns the Markdown."""
    import csv

    cols = columns(rows)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.with_suffix(".csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows({c: value(r, c) for c in cols} for r in rows)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows + mean_rows(rows):
        lines.append("| " + " | ".join(fmt(value(r, c)) for c in cols) + " |")
    md = "\n".join(lines) + "\n"
    out.with_suffix(".md").write_text(md)
    return md


def mean_rows(rows: list[dict]) -> list[dict]:
    """One 'mean' row per policy that ran more than once."""
    out = []
    for policy in dict.fromkeys(r["policy"] for r in rows):
        mine = [r for r in rows if r["policy"] == policy]
        if len(mine) < 2:
            continue
        m = {"policy": policy, "seed": "mean"}
        for c in columns(rows)[2:]:
            vals = [value(r, c) for r in mine if isinstance(value(r, c), (int, float))]
            m[c] = float(np.mean(vals)) if vals else None
        out.append(m)
    return out


def fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.3f}" if abs(v) < 10 else f"{v:.1f}"
    return str(v)
