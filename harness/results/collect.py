"""Find and read run directories for a report. A missing or corrupt file becomes a problem
(file + what is wrong) and the rest of the report is still built."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import numpy as np
import pandas as pd

from harness.results.csvfile import complete_rows, dropped_rows
from harness.results.rundir import EVENTS, METRICS, PLACEMENTS, REQUESTS, SUMMARY, request_files
from harness.results.stats import batch_means_ci95
from harness.results.summary import ok_mask
from harness.seeds import run_label


@dataclass
class Run:
    path: Path
    summary: dict
    requests: pd.DataFrame | None = None
    events: list[dict] = field(default_factory=list)
    placements: list[dict] = field(default_factory=list)
    metrics: pd.DataFrame | None = None  # metrics.csv: per pod, every few seconds
    apart: bool = False  # set by find when simulated and live runs are read together

    @property
    def world(self) -> str:
        """live, or sim (``harness evaluate SCENARIO``)."""
        return str(self.summary.get("world", "live"))

    @property
    def name(self) -> str:
        """The policy the run ran, whatever its world."""
        return str(self.summary.get("policy", self.path.name))

    @property
    def policy(self) -> str:
        """The policy as the report groups runs: a simulated run apart from live ones when a
        report has both ("reach (sim)")."""
        return f"{self.name} (sim)" if self.apart and self.world == "sim" else self.name

    @property
    def seed(self) -> int | None:
        """The run's seed; None for a run made before every run had one (an unseeded live repeat)."""
        return self.summary.get("seed")

    @property
    def label(self) -> str:
        """``<policy> s<seed>`` (``harness.seeds``); a run of before, with no seed, by its repeat: ``r<k>``."""
        if self.seed is not None:
            return run_label(self.policy, self.seed)
        return f"{self.policy} r{self.summary.get('repeat', 1)}"

    @property
    def t0(self) -> float | None:
        for e in self.events:
            if e["kind"] == "load-start":
                return float(e["t"])
        if self.requests is not None and len(self.requests):
            return float(self.requests.t_send.min())
        return None


@dataclass
class Collected:
    runs: list[Run] = field(default_factory=list)
    evaluations: list[tuple[Path, pd.DataFrame]] = field(default_factory=list)
    leaderboards: list[Path] = field(default_factory=list)  # folders `harness leaderboard` wrote
    problems: list[str] = field(default_factory=list)


def find(paths: list[Path]) -> Collected:
    out = Collected()
    for p in paths:
        if not p.exists():
            out.problems.append(f"{p}: no such file or directory")
        elif p.is_file():
            _evaluation(p, out)
        elif (p / SUMMARY).exists() or (p / REQUESTS).exists():
            _run(p, out)
        elif (p / "leaderboard.json").exists():
            out.leaderboards.append(p)  # its tables, not its hundreds of runs (runs/ holds them for a closer look)
        else:
            runs = sorted(d for d in p.iterdir() if d.is_dir() and ((d / SUMMARY).exists() or (d / REQUESTS).exists()))
            evals = sorted(f for f in p.glob("*.csv") if f.name != "comparison.csv" and _looks_like_evaluation(f))
            if not runs and not evals:
                out.problems.append(_nothing_inside(p))
            for d in runs:
                _run(d, out)
            for f in evals:
                _evaluation(f, out)
    if len({r.world for r in out.runs}) > 1:
        for r in out.runs:
            r.apart = True
    return out


def _nothing_inside(p: Path) -> str:
    """What a folder with no run directory directly inside holds instead, and what to do: a
    leaderboard folder whose sweep did not end (no ``leaderboard.json``), or run directories
    deeper down (a leaderboard's under ``runs/<track>/<app>/<scenario>/``)."""
    deeper = {f.parent for name in (SUMMARY, REQUESTS) for f in p.rglob(name)}
    folders = sorted({d.parent for d in deeper})
    where = (f"{len(deeper)} run director{'y' if len(deeper) == 1 else 'ies'} in " +
             (f"1 folder under it: harness report {folders[0]}" if len(folders) == 1 else
              f"{len(folders)} folders under it, a report each: e.g. harness report {folders[0]}") if folders else "")
    if (p / "leaderboard.yaml").exists() or (p / "leaderboard.csv").exists():
        again = (f"harness leaderboard {p / 'leaderboard.yaml'} --resume --out {p} (with its --seeds) plays what is left and "
                 "writes it"
                 if (p / "leaderboard.yaml").exists() else "its leaderboard.yaml is missing too")
        return (f"{p}: a leaderboard folder without leaderboard.json (its sweep did not end: stopped or killed): "
                f"{again}" + (f"; or report a setting's runs, {where}" if where else ""))
    if where:
        return f"{p}: no run directories directly inside, and no sweep output; {where}"
    return f"{p}: no run directories (with {SUMMARY} or {REQUESTS}) and no sweep output inside"


def _looks_like_evaluation(f: Path) -> bool:
    try:
        head = f.open().readline()
    except OSError:
        return False
    return head.startswith("policy,pods,latency_ms")


def _evaluation(f: Path, out: Collected) -> None:
    try:
        if f.suffix == ".json":
            df = pd.DataFrame(json.loads(f.read_text()))
        else:
            df = pd.read_csv(f)
        missing = {"policy", "pods", "latency_ms"} - set(df.columns)
        if missing:
            raise ValueError(f"missing column(s) {', '.join(sorted(missing))}")
        out.evaluations.append((f, df))
    except (OSError, ValueError) as exc:
        out.problems.append(f"{f}: not a sweep output ({exc})")


def _run(d: Path, out: Collected) -> None:
    summary: dict = {}
    try:
        summary = json.loads((d / SUMMARY).read_text())
        if not isinstance(summary, dict):
            raise ValueError("expected a JSON object")
    except FileNotFoundError:
        out.problems.append(f"{d / SUMMARY}: missing (the run did not finish); its requests are still shown")
    except (OSError, ValueError) as exc:
        out.problems.append(f"{d / SUMMARY}: corrupt ({exc}); its requests are still shown")
        summary = {}
    run = Run(d, summary)
    try:
        files = request_files(d) or [d / REQUESTS]
        frames = []
        for f in files:  # one per load; whole rows only, and one line to say what was left out
            text, cut, malformed = complete_rows(f)
            if (dropped := dropped_rows(f, cut, malformed)) is not None:
                out.problems.append(dropped)
            frames.append(pd.read_csv(io.StringIO(text), keep_default_na=False))
        df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
        need = {"t_send", "latency_ms", "status"}
        if not need <= set(df.columns):
            raise ValueError(f"missing column(s) {', '.join(sorted(need - set(df.columns)))}")
        df["t_send"] = pd.to_numeric(df.t_send, errors="coerce")
        df["latency_ms"] = pd.to_numeric(df.latency_ms, errors="coerce")
        df["status"] = pd.to_numeric(df.status, errors="coerce").fillna(0).astype(int)
        for col in ("error", "entry"):
            if col not in df.columns:
                df[col] = ""
        run.requests = df.dropna(subset=["t_send", "latency_ms"])
    except FileNotFoundError:
        out.problems.append(f"{d / REQUESTS}: missing; no request plots for this run")
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        out.problems.append(f"{d / REQUESTS}: corrupt ({exc}); no request plots for this run")
    try:
        ev = pd.read_csv(d / EVENTS, keep_default_na=False)
        run.events = [{"t": float(r.t), "kind": r.kind, "detail": json.loads(r.detail or "{}")} for r in ev.itertuples()]
    except FileNotFoundError:
        out.problems.append(f"{d / EVENTS}: missing; no event markers for this run")
    except (OSError, ValueError, AttributeError, pd.errors.ParserError) as exc:
        out.problems.append(f"{d / EVENTS}: corrupt ({exc}); no event markers for this run")
    try:
        for i, line in enumerate((d / PLACEMENTS).read_text().splitlines()):
            if line.strip():
                try:
                    run.placements.append(json.loads(line))
                except ValueError:
                    out.problems.append(f"{d / PLACEMENTS}: line {i + 1} is not JSON; skipped")
    except FileNotFoundError:
        out.problems.append(f"{d / PLACEMENTS}: missing; no sim-vs-real for this run")
    try:
        run.metrics = pd.read_csv(d / METRICS)
    except FileNotFoundError:
        pass  # runs made before metrics were pulled; the per-service breakdown is left out
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        out.problems.append(f"{d / METRICS}: corrupt ({exc}); no per-service breakdown for this run")
    if summary or run.requests is not None:
        out.runs.append(run)


def ok_requests(run: Run) -> pd.DataFrame:
    return run.requests[ok_mask(run.requests)]


def held_intervals(run: Run, min_requests: int = 5) -> Iterator[tuple[dict, float, float, pd.DataFrame, float]]:
    """Each placement held during the run that has a prediction: its record, the interval it held
    (after the warm-up), the successful requests sent in it, and when the next placement began
    (inf for the last); intervals with fewer than ``min_requests`` are left out."""
    if run.requests is None or not run.placements:
        return
    ok = ok_requests(run)
    warm = float(run.summary.get("warmup_s", 0) or 0)
    t0 = run.t0
    end = float(run.requests.t_send.max())
    for i, p in enumerate(run.placements):
        if p.get("predicted_ms") is None:
            continue
        start = float(p["t"])
        nxt = float(run.placements[i + 1]["t"]) if i + 1 < len(run.placements) else float("inf")
        stop = nxt if nxt != float("inf") else end
        if t0 is not None:
            start = max(start, t0 + warm)
        sel = ok[(ok.t_send >= start) & (ok.t_send < stop)]
        if len(sel) >= min_requests:
            yield p, start, stop, sel, nxt


QUEUEING = "node-ps"  # the queueing discipline sim-vs-real shows (sim.queueing)


def sim_vs_real(run: Run, min_requests: int = 5) -> list[dict]:
    """Each placement held during the run: predicted latency next to the measured mean of the
    requests sent while it held, with that mean's 95 % confidence half-width (batch means)."""
    rows = []
    t0 = run.t0
    for p, start, stop, sel, _ in held_intervals(run, min_requests):
        measured = float(sel.latency_ms.mean())
        half = batch_means_ci95(sel.t_send, sel.latency_ms)
        row = {"run": run.label, "policy": run.policy, "from_s": round(start - (t0 or start), 1),
               "to_s": round(stop - (t0 or start), 1), "reason": p.get("reason", ""), "requests": int(len(sel)),
               "predicted_ms": round(float(p["predicted_ms"]), 2), "measured_ms": round(measured, 2),
               "measured_ci_ms": None if half is None else round(half, 2),
               "error_pct": round(100 * (float(p["predicted_ms"]) - measured) / measured, 2)}
        # other models' predictions of the same interval, when the run recorded them: REACH's model
        # as published beside a calibrated one, the closed form with several closed-loop users
        for other in ("uncalibrated", "closed"):
            value = (p.get("predicted") or {}).get(f"{other}_ms")
            if value is not None:
                row[f"{other}_ms"] = round(float(value), 2)
                row[f"{other}_error_pct"] = round(100 * (value - measured) / measured, 2)
        queueing = ((p.get("predicted") or {}).get("queueing_ms") or {}).get(QUEUEING)
        if "queueing_ms" in (p.get("predicted") or {}):  # an open-loop rate was known: the queueing model's too
            row["queueing_ms"] = None if queueing is None else round(float(queueing), 2)
            row["queueing_error_pct"] = None if queueing is None else round(100 * (queueing - measured) / measured, 2)
        rows.append(row)
    return rows
