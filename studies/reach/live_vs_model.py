"""Why a policy ranks differently live than in simulation: each live run's placements, read back
through the model that ranked them, split into what the model says is network and what it says
is computation, and fitted to what was measured.

    .venv/bin/python -m studies.reach.live_vs_model results/<leaderboard folder or run folders> ...

For every live run (a folder with ``placements.jsonl`` and ``summary.json``): the model's latency
of each placement the run held (recorded with it), weighted by how long it held over the
measured window, split into the network part N (the users' RTT to the entry and the calls'
RTTs: ``gateway_ms`` + the edges' ``D_S``) and the execution part E (the services' ``T_E`` on
the path). The model ranks policies by N + E. Live, the services' execution takes k times what
the profile measured when the host is k times slower, while the RTTs are injected and do not
move; so per app one least-squares fit of measured = N + k·E + c over every run (c: what the
model has no term for, the same for all) says how much slower the host computed than at
profiling, and whether that alone reorders the policies. Printed per app: per policy the
measured mean ± 95 % CI over runs, the model's N + E and N + k·E + c, the three rankings, the
fit's k, c and R², and the host's reference job during the runs.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.results.stats import mean_ci95, spearman


@dataclass
class Run:
    app: str
    policy: str
    folder: Path
    measured_ms: float
    network_ms: float  # time-weighted N
    execution_ms: float  # time-weighted E
    host_ms: float  # median of the host's reference job during the run


def parts(predicted: dict) -> tuple[float, float]:
    """(N, E) of one placement's model breakdown: a request's path is the app's call tree, so
    the execution part is Σ T_E over the services weighted as T_S weighs them; it is what is
    left of the latency once the network terms are taken out."""
    network = predicted["gateway_ms"] + sum(e["D_S_ms"] for e in predicted["edges"])
    return network, predicted["latency_ms"] - network


def read(folder: Path) -> Run | None:
    s = json.loads((folder / "summary.json").read_text())
    if s.get("world", "live") != "live":
        return None  # a simulated run: nothing measured
    if s.get("mean_ms") is None or not (folder / "placements.jsonl").exists():
        return None
    held = [json.loads(line) for line in (folder / "placements.jsonl").read_text().splitlines() if line.strip()]
    start, end = float(s.get("warmup_s") or 0), float(s["duration_s"])
    times = [0.0 if h["t_run"] is None else float(h["t_run"]) for h in held] + [end]
    n = e = total = 0.0
    for h, t0, t1 in zip(held, times, times[1:]):
        w = max(0.0, min(t1, end) - max(t0, start))
        if w > 0 and h.get("predicted"):
            dn, de = parts(h["predicted"])
            n, e, total = n + w * dn, e + w * de, total + w
    if total == 0:
        return None
    app = json.loads((folder / "inputs/app.json").read_text())["name"]
    host = float(np.median(s["host_reference_ms"])) if s.get("host_reference_ms") else float("nan")
    return Run(app, s["policy"], folder, float(s["mean_ms"]), n / total, e / total, host)


def runs_in(paths: list[Path]) -> list[Run]:
    found = []
    for p in paths:
        for summary in sorted(p.rglob("summary.json")) if p.is_dir() else []:
            r = read(summary.parent)
            if r is not None:
                found.append(r)
    return found


def fit(runs: list[Run]) -> tuple[float, float, float]:
    """(k, c, R²) of measured − N = k·E + c over ``runs``."""
    y = np.array([r.measured_ms - r.network_ms for r in runs])
    A = np.c_[[r.execution_ms for r in runs], np.ones(len(runs))]
    (k, c), *_ = np.linalg.lstsq(A, y, rcond=None)
    pred = A @ [k, c] + [r.network_ms for r in runs]
    meas = np.array([r.measured_ms for r in runs])
    r2 = 1 - ((meas - pred) ** 2).sum() / ((meas - meas.mean()) ** 2).sum()
    return float(k), float(c), float(r2)


def ranks(values: dict[str, float]) -> dict[str, int]:
    return {p: i + 1 for i, p in enumerate(sorted(values, key=values.get))}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", type=Path, help="a leaderboard folder, a session folder or run folders")
    args = ap.parse_args()
    runs = runs_in(args.paths)
    if not runs:
        print("no live run with placements found", file=sys.stderr)
        return 2
    for app in sorted({r.app for r in runs}):
        mine = [r for r in runs if r.app == app]
        k, c, r2 = fit(mine)
        print(f"\n{app}: {len(mine)} live runs; fit measured = N + {k:.2f}·E + {c:.1f} ms (R² {r2:.2f}); the host's "
              f"reference job {np.nanmedian([r.host_ms for r in mine]):.1f} ms (median over runs)")
        print(f"  {'policy':15s} {'measured ms':>16s} {'model N+E':>10s} {'N':>7s} {'E':>7s} {'N+kE+c':>8s}   ranks: measured / model / fitted")
        measured, model, fitted = {}, {}, {}
        for policy in sorted({r.policy for r in mine}):
            rs = [r for r in mine if r.policy == policy]
            m, h = mean_ci95([r.measured_ms for r in rs])
            measured[policy] = m
            n, e = float(np.mean([r.network_ms for r in rs])), float(np.mean([r.execution_ms for r in rs]))
            model[policy], fitted[policy] = n + e, n + k * e + c
            print(f"  {policy:15s} {m:8.1f} ± {h or 0:5.1f} {n + e:10.1f} {n:7.1f} {e:7.1f} {n + k * e + c:8.1f}")
        rm, rd, rf = ranks(measured), ranks(model), ranks(fitted)
        order = sorted(measured, key=measured.get)
        print("  ranks (measured / model / fitted): " + ", ".join(f"{p} {rm[p]}/{rd[p]}/{rf[p]}" for p in order))
        names = list(measured)
        print(f"  Spearman's ρ with the measured ranking: model {spearman([model[p] for p in names], [measured[p] for p in names]):.2f}, "
              f"fitted {spearman([fitted[p] for p in names], [measured[p] for p in names]):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
