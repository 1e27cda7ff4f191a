"""One run's directory, written as the run goes (a crash or Ctrl-C keeps what was measured).

    inputs/            app.json, scenario.yaml, testbed.yaml, profile.json, policy.json, harness.json
    requests.csv       one row per request (the load generator writes it): t_send, latency_ms, status, bytes, error,
                       pod, entry (the service it went to); with several loads each writes its own
                       (requests.1.csv, ...) while the run goes, merged into requests.csv at its end
    events.csv         t (Unix s), t_run (s since the load started), kind, detail (JSON)
    placements.jsonl   the placement after every change, with the simulator's predicted latency and its
                       breakdown (per service T_E and T_S, per call D_S, the gateway's delay)
    metrics.csv        per pod, every few seconds, from Prometheus: CPU cores, requests/s, and the cells'
                       running totals (requests; ms in the internal job, external calls, whole request)
                       whose differences give any interval's per-service times (results.breakdown)
    summary.json       at the end (also after Ctrl-C, marked partial)
    locust_stats.csv, locust_stats_history.csv, locust_failures.csv, locust_exceptions.csv
                       Locust's own files, as `locust --csv locust` writes them (one set per load)

A write that fails (disk full, read-only) raises OutputError at once and is remembered in
``failed``, so the run's main loop stops even when a helper thread met it first.
"""

from __future__ import annotations

import csv
import hashlib
import json
import platform
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from harness import events, shipped
from harness.errors import OutputError

REQUESTS, EVENTS, PLACEMENTS, METRICS, SUMMARY = "requests.csv", "events.csv", "placements.jsonl", "metrics.csv", "summary.json"
PROMETHEUS = "prometheus.json"  # the run's Prometheus series, kept past the testbed
REQUEST_FIELDS = ("t_send", "latency_ms", "status", "bytes", "error", "pod", "entry")  # the load generator writes it
EVENT_FIELDS = ("t", "t_run", "kind", "detail")
METRIC_FIELDS = ("t", "t_run", "pod", "service", "node", "cpu_cores", "rps", "requests", "internal_ms", "external_ms",
                 "request_ms", "cpu_s")
# the cells' running totals in metrics.csv: requests and ms spent (μBench's histograms), then the
# process's CPU seconds (runs made before it have only the first four)
TIME_TOTALS = ("requests", "internal_ms", "external_ms", "request_ms")
TOTALS = (*TIME_TOTALS, "cpu_s")


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class RunDir:
    def __init__(self, path: Path):
        self.path = path
        self.failed: str | None = None  # the first write that failed: "<file>: <why>"
        self._lock = threading.Lock()
        self.t0: float | None = None  # when the load started; events before it have no t_run
        self.events: list[dict] = []
        self.placements: list[dict] = []  # what placements.jsonl holds, for the summary
        with self._writing(path):
            (path / "inputs").mkdir(parents=True, exist_ok=True)
            self._events = open(path / EVENTS, "w", newline="")
            self._ew = csv.writer(self._events)
            self._ew.writerow(EVENT_FIELDS)
            self._metrics = open(path / METRICS, "w", newline="")
            self._mw = csv.writer(self._metrics)
            self._mw.writerow(METRIC_FIELDS)
            self._placements = open(path / PLACEMENTS, "w")

    @contextmanager
    def _writing(self, what: Path) -> Iterator[None]:
        try:
            yield
        except OSError as exc:
            why = f"{what}: {exc.strerror or exc}"
            self.failed = self.failed or why
            raise OutputError(why) from None

    def check(self) -> None:
        """Raise if any write of this run has failed (a helper thread may have met it first)."""
        if self.failed:
            raise OutputError(self.failed)

    @property
    def requests_file(self) -> Path:
        return self.path / REQUESTS

    def request_file(self, load: int) -> Path:
        """Load k's request log: requests.csv, then requests.1.csv, requests.2.csv, ..."""
        return self.path / (REQUESTS if load == 0 else f"requests.{load}.csv")


    # inputs ------------------------------------------------------------------
    def save_input(self, name: str, text: str) -> None:
        with self._writing(self.path / "inputs" / name):
            (self.path / "inputs" / name).write_text(text)

    def save_policy(self, name: str, model: Path | None) -> None:
        info = {"name": name, "model": str(model) if model else None, "model_sha256": sha256(model) if model else None}
        meta = model.with_suffix(".json") if model else None
        if meta is not None and meta.exists():  # what the model was trained on (harness.policies.provenance)
            try:
                recorded = json.loads(meta.read_text())
                info["provenance"] = recorded.get("provenance")
                info["trained_on_profile"] = recorded.get("profile")  # what a model from before provenance says
            except ValueError:
                info["provenance"] = None
        self.save_input("policy.json", json.dumps(info, indent=1))

    def save_harness(self, repo: Path, argv: list[str]) -> None:
        from harness import __version__

        info = {"version": __version__, "git_commit": shipped.commit(), "python": platform.python_version(), "argv": argv}
        self.save_input("harness.json", json.dumps(info, indent=1))

    # as the run goes ---------------------------------------------------------
    def since_start(self, t: float) -> float | None:
        return None if self.t0 is None else round(t - self.t0, 3)

    def event(self, kind: str, t: float | None = None, **detail) -> dict:
        """Write one event; its kind and fields must be in the catalogue (``harness.events``)."""
        if events.get(kind) is None:
            from harness import faults

            faults.load_all()  # fault kinds (plug-ins too) declare their events when loaded
        detail = events.checked(kind, detail)
        t = time.time() if t is None else t
        row = {"t": round(t, 3), "t_run": self.since_start(t), "kind": kind, "detail": detail}
        with self._lock, self._writing(self.path / EVENTS):
            self.events.append(row)  # kept in memory even when the file cannot take it
            self._ew.writerow((row["t"], row["t_run"], kind, json.dumps(detail, sort_keys=True)))
            self._events.flush()
        return row

    def placement(self, placement: dict[str, list[str]], predicted: dict | None, reason: str,
                  t: float | None = None) -> None:
        """``predicted``: the model's ``predict`` of this placement (None while a service has no pod)."""
        t = time.time() if t is None else t
        rec = {"t": round(t, 3), "t_run": self.since_start(t), "reason": reason,
               "predicted_ms": None if predicted is None else round(predicted["latency_ms"], 3), "placement": placement,
               "predicted": predicted}
        with self._lock, self._writing(self.path / PLACEMENTS):
            self.placements.append(rec)
            self._placements.write(json.dumps(rec) + "\n")
            self._placements.flush()

    def metrics(self, rows: list[tuple], t: float | None = None) -> None:
        """One pull's rows (``METRIC_FIELDS`` after t and t_run), taken at ``t`` (default now)."""
        t = time.time() if t is None else t
        with self._lock, self._writing(self.path / METRICS):
            for r in rows:
                self._mw.writerow((round(t, 3), self.since_start(t), *r))
            self._metrics.flush()

    def prometheus(self, series: list[dict]) -> None:
        """The run's Prometheus series (``Metrics.series``), kept past the testbed, in the range
        API's own form: {"resultType": "matrix", "result": [...]}."""
        with self._writing(self.path / PROMETHEUS):
            (self.path / PROMETHEUS).write_text(json.dumps({"resultType": "matrix", "result": series}))

    def summary(self, summary: dict) -> None:
        tmp = self.path / (SUMMARY + ".tmp")
        try:
            with self._writing(self.path / SUMMARY):
                tmp.write_text(json.dumps(summary, indent=1))
                tmp.replace(self.path / SUMMARY)
        finally:
            tmp.unlink(missing_ok=True)  # never a half-written summary.json.tmp left behind

    def close(self) -> None:
        with self._lock:
            for f in (self._events, self._metrics, self._placements):
                try:
                    f.close()
                except OSError as exc:  # the last buffered rows did not fit: say so, close the rest
                    self.failed = self.failed or f"{f.name}: {exc.strerror or exc}"


def request_files(run: Path) -> list[Path]:
    """Every request log of a run directory (one per load), in load order."""
    extra = sorted(run.glob("requests.*.csv"), key=lambda p: int(p.name.split(".")[1]) if p.name.split(".")[1].isdigit()
                   else 1 << 30)
    return [p for p in [run / REQUESTS, *extra] if p.exists()]


def merge_request_logs(run: Path) -> None:
    """One requests.csv for the run: the other loads' logs (written apart while the run went, as
    processes cannot share a file safely) appended, rows in send-time order; then removed."""
    files = request_files(run)
    if len(files) < 2:
        return
    import pandas as pd

    frames = [pd.read_csv(f, dtype=str, keep_default_na=False) for f in files]
    df = pd.concat(frames, ignore_index=True)
    df = df.iloc[df.t_send.astype(float).argsort(kind="stable")]
    tmp = run / (REQUESTS + ".tmp")
    try:
        df.to_csv(tmp, index=False)
        tmp.replace(run / REQUESTS)
    except OSError as exc:  # the loads' own logs stay as they are: nothing measured is lost
        tmp.unlink(missing_ok=True)
        raise OutputError(f"{run / REQUESTS}: {exc.strerror or exc}") from None
    for f in files[1:]:
        f.unlink()
