"""KubeDSM live against the default scheduler steered to the edge (paper 004, §6): reads a
`harness run` session of an m_σ workload (scenarios/kubedsm/, any number of seeds) and prints,
per policy, the edge ratio (mean over deployments of the time-weighted share of their pods on
the edge) with its 95 % CI, the migrations, the requests and the errors, and the latency measured
per deployment; then KubeDSM's gain in edge ratio and in latency over the other policy, paired by
seed (each seed plays the same schedule and load for both), with a 95 % CI of the
difference, beside the paper's numbers and the latency its figure scripts model.

    .venv/bin/harness run scenarios/kubedsm/1.3_0.4.yaml --policy kubedsm,k8s-edge --seeds 3
    .venv/bin/python -m studies.kubedsm.live results/<utc>-kubedsm-1.3_0.4

The paper measures only the edge ratio; its scripts model latency as 300 ms per request served
in the cloud and 50 ms on the edge (later 100 / 10 ms). Here the latency is measured.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from harness.results.collect import Run, find, ok_mask
from harness.results.stats import mean_ci95

PAPER_EDGE_RATIO = {"kubedsm": 0.80}  # Fig. 4, the m = 1.1..1.6 sweep; +13.4 % over the best baseline
MODELLED_MS = {"cloud": 300.0, "edge": 50.0}  # the figure scripts' latency model (2025-01-03 .. 2026-02-07)


def ci(values: list[float], fmt: str = "{:.3f}") -> str:
    mean, half = mean_ci95(values)
    return fmt.format(mean) + (f" ± {fmt.replace('+', '').format(half)}" if half is not None else " (1 run)")


def edge_ratio(run: Run) -> float:
    return float(run.summary["metrics"]["edge_ratio"])


def errors_in_moves(run: Run, after_s: float = 2.0) -> int:
    """Failed requests sent while a move ran (its start to ``after_s`` past its end): requests a
    migration lost. A move event is written at its end, with its duration."""
    if run.requests is None or not len(run.requests):
        return 0
    spans = [(float(e["t"]) - float((e.get("detail") or {}).get("seconds") or 0), float(e["t"]) + after_s)
             for e in run.events if e["kind"] == "move"]
    failed = run.requests[~ok_mask(run.requests)].t_send.to_numpy()
    return int(sum(any(a <= t <= b for a, b in spans) for t in failed))


def modelled_ms(share: float) -> float:
    """The paper's scripts' latency for a share of requests served on the edge (pods share load evenly)."""
    return share * MODELLED_MS["edge"] + (1 - share) * MODELLED_MS["cloud"]


def table(path: Path, ours: str) -> list[str]:
    col = find([path])
    if col.problems:
        print("\n".join(col.problems), file=sys.stderr)
    by: dict[str, dict[int, Run]] = {}
    for run in col.runs:
        if "metrics" not in run.summary:  # still running, or stopped before the end
            print(f"{run.path}: no placement metrics yet; left out", file=sys.stderr)
            continue
        # paired by seed; a session of before, unseeded, by its repeat
        by.setdefault(run.policy, {})[run.seed if run.seed is not None else int(run.summary.get("repeat", 1))] = run
    entries = sorted({e for run in col.runs for e in (run.summary.get("entries") or {})})
    lines = [f"{path}: {sum(len(v) for v in by.values())} finished runs",
             f"{'policy':<10} {'n':>2} {'edge ratio':>15} {'migrations':>10} {'requests':>8} {'errors':>6} {'in moves':>8} "
             f"{'mean ms':>15} {'p50 ms':>7} " + " ".join(f"{e + ' ms':>8}" for e in entries) + "  modelled ms  paper"]
    for policy, runs in by.items():
        rs = list(runs.values())
        er = [float(edge_ratio(r)) for r in rs]
        migr = np.mean([sum((r.summary.get("metrics", {}).get("migrations") or {}).values()) for r in rs])
        per_entry = [np.mean([r.summary["entries"][e]["mean_ms"] for r in rs if e in (r.summary.get("entries") or {})])
                     for e in entries]
        paper = PAPER_EDGE_RATIO.get(policy)
        lines.append(f"{policy:<10} {len(rs):>2} {ci(er):>15} {migr:>10.1f} {sum(r.summary['requests'] for r in rs):>8d} "
                     f"{sum(r.summary['errors'] for r in rs):>6d} {sum(errors_in_moves(r) for r in rs):>8d} {ci([r.summary['mean_ms'] for r in rs], '{:.1f}'):>15} "
                     f"{np.mean([r.summary['p50_ms'] for r in rs]):>7.1f} " + " ".join(f"{v:>8.1f}" for v in per_entry)
                     + f"  {modelled_ms(float(np.mean(er))):>11.1f}  " + (f"{paper:.2f} (sweep)" if paper else ""))
    if ours in by:
        for other, runs in by.items():
            if other == ours:
                continue
            pairs = sorted(set(runs) & set(by[ours]))
            if not pairs:
                continue
            d_er = [edge_ratio(by[ours][k]) - edge_ratio(runs[k]) for k in pairs]
            d_ms = [by[ours][k].summary["mean_ms"] - runs[k].summary["mean_ms"] for k in pairs]
            mean_er, half_er = mean_ci95(d_er)
            crosses = half_er is None or mean_er - half_er <= 0 <= mean_er + half_er
            base = np.mean([edge_ratio(runs[k]) for k in pairs])
            lines.append(f"{ours} - {other}, paired over {len(pairs)} repeats: edge ratio {ci(d_er)} "
                         f"({mean_er / base:+.1%}; the 95 % CI {'crosses' if crosses else 'does not cross'} 0), "
                         f"mean latency {ci(d_ms, '{:+.1f}')} ms measured, "
                         f"{modelled_ms(base + mean_er) - modelled_ms(base):+.1f} ms as the paper's scripts model it")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sessions", type=Path, nargs="+", help="results/<utc>-kubedsm-<m>_<sigma> directories")
    ap.add_argument("--policy", default="kubedsm", help="the policy compared against every other (default kubedsm)")
    args = ap.parse_args()
    for path in args.sessions:
        print("\n".join(table(path, args.policy)), end="\n\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
