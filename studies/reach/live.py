"""REACH's live experiments beside the paper's numbers: reads `harness run` sessions
(node-failure, traffic-surge, latency-shift; any number of seeds) and prints, per policy, the
mean latency over the seeds with its 95 % CI, the p95, the moves, the latency and RPS before
and after the scenario's change (the fault, or the surge), REACH's improvement over the others,
and what the paper reports (REACH §VII-D and §VII-E).

    .venv/bin/python -m studies.reach.live results/<utc>-node-failure results/<utc>-traffic-surge

A run's own summary.json gives its mean over the measured window; "before" and "after" split
the requests sent in that window at the change's time (the first fault, or the load step).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from harness.results.collect import Run, find, ok_requests
from harness.results.stats import mean_ci95
from harness.spec.loader import load_model
from harness.spec.scenario import Scenario

# REACH's paper (000): §VII-D node failure (Chain, 3 replicas, one best-effort thread) and §VII-E
# traffic surge (HPA at 50 % CPU, 1 -> 6 threads at 90 s). Mean latency in ms; RPS after the surge.
PAPER = {
    "node-failure": {"reach": 219.92, "improvement_vs": {"rsdql": 0.079, "default": 0.191}},
    "traffic-surge": {"reach": 197.55, "rsdql": 207.29, "default": 255.12, "cloud-first": 258.77,
                      "latency-greedy": 258.02, "rps_after": {"reach": 26.62, "rsdql": 25.45, "default": 21.0}},
}


def change_s(sc: Scenario) -> float | None:
    """When the scenario changes the world: its first fault, else its first load step after 0."""
    if sc.faults:
        return min(f.at_s for f in sc.faults)
    steps = [s.at_s for s in getattr(sc.load, "steps", []) if s.at_s > 0] if not isinstance(sc.load, list) else []
    return min(steps) if steps else None


def split(run: Run, at_s: float | None) -> dict:
    """Mean latency (ok requests) and RPS before and after ``at_s`` seconds into the load."""
    ok = ok_requests(run)
    t0 = run.t0
    end = float(run.summary.get("duration_s") or 0)
    if ok is None or t0 is None or at_s is None or not len(ok):
        return {}
    t = ok.t_send - t0
    warm = float(run.summary.get("warmup_s") or 0)
    before, after = ok[(t >= warm) & (t < at_s)], ok[(t >= at_s) & (t <= end)]
    return {"before_ms": before.latency_ms.mean(), "after_ms": after.latency_ms.mean(),
            "rps_before": len(before) / max(at_s - warm, 1e-9), "rps_after": len(after) / max(end - at_s, 1e-9)}


def session_table(path: Path) -> tuple[str, list[str]]:
    col = find([path])
    if col.problems:
        print("\n".join(col.problems), file=sys.stderr)
    scenario_file = next(path.glob("*/inputs/scenario.yaml"), None)
    sc = load_model(Scenario, scenario_file) if scenario_file else None
    name = sc.name if sc else path.name.split("-", 1)[-1]
    at = change_s(sc) if sc else None
    by: dict[str, list[Run]] = {}
    for run in col.runs:
        by.setdefault(run.policy, []).append(run)
    means = {p: mean_ci95([float(r.summary["mean_ms"]) for r in runs]) for p, runs in by.items()}
    paper = PAPER.get(name, {})
    lines = [f"{name} ({path}): {len(col.runs)} runs; change at {at} s",
             f"{'policy':<10} {'n':>2} {'mean ms':>16} {'p95 ms':>8} {'moves':>6} {'before ms':>10} {'after ms':>9} "
             f"{'RPS before':>10} {'RPS after':>9}  paper"]
    for policy, runs in by.items():
        mean, half = means[policy]
        parts = [split(r, at) for r in runs]

        def avg(key: str) -> float:  # over the runs that have the value
            values = [p[key] for p in parts if key in p]
            return float(np.mean(values)) if values else float("nan")

        ci = f"± {half:.1f}" if half is not None else "(1 run)"
        p_mean = paper.get(policy)
        p_rps = paper.get("rps_after", {}).get(policy)
        note = ", ".join(x for x in (f"{p_mean} ms" if p_mean else "", f"{p_rps} RPS after" if p_rps else "") if x)
        lines.append(f"{policy:<10} {len(runs):>2} {mean:>8.1f} {ci:>7} "
                     f"{np.mean([r.summary.get('p95_ms') or np.nan for r in runs]):>8.1f} "
                     f"{np.mean([r.summary.get('moves') or 0 for r in runs]):>6.1f} {avg('before_ms'):>10.1f} "
                     f"{avg('after_ms'):>9.1f} {avg('rps_before'):>10.2f} {avg('rps_after'):>9.2f}  {note}")
    if "reach" in means:
        r = means["reach"][0]
        for other, (m, _) in means.items():
            if other == "reach":
                continue
            paper_gain = paper.get("improvement_vs", {}).get(other)
            if paper_gain is None and other in paper and "reach" in paper:
                paper_gain = (paper[other] - paper["reach"]) / paper[other]
            gain = (m - r) / m
            lines.append(f"REACH's mean latency {abs(gain):.1%} {'below' if gain >= 0 else 'above'} {other}'s"
                         + (f" (the paper: {paper_gain:.1%} below)" if paper_gain is not None else ""))
    return name, lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sessions", type=Path, nargs="+", help="results/<utc>-<scenario> directories")
    args = ap.parse_args()
    for path in args.sessions:
        print("\n".join(session_table(path)[1]), end="\n\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
