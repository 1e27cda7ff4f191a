"""The open-loop runs of several sessions side by side (no testbed needed): how far the
bottleneck's measured load moved between sessions, and node-ps's errors pooled over them.

    .venv/bin/python -m studies.fidelity.across results/<utc>-fidelity-open results/<utc>-fidelity-open ...
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import numpy as np

from harness.results.stats import mean_ci95
from studies.fidelity.common import show


def across(folders: list[Path]) -> int:
    """The open-loop runs of several sessions side by side, per app and rate share: the rate each
    session sent, the load the cells measured on the busiest node (ρ) and what that load is per
    request (busy ms per request: the host's speed, as the bottleneck saw it), the measured mean
    and node-ps's (fitted capacity) error. Then, per app and share, how far ρ moved between the
    sessions and the waiting factor 1/(1 − ρ) that moves with it: near saturation a few per cent
    of host speed are tens of per cent of latency, whatever the model. Last, node-ps's mean
    absolute error over the sessions with its 95 % interval (t over sessions), judged against the
    15 % bar like ``within_bar`` judges one run."""
    rows = []
    for where in folders:
        path = next((where / n for n in ("fidelity_open.reread.csv", "fidelity_open.csv") if (where / n).exists()), None)
        if path is None:
            print(f"studies.fidelity.across: error: {where}: no fidelity_open.csv (not a studies.fidelity.open_loop output)", file=sys.stderr)
            return 2
        with path.open() as f:
            got = list(csv.DictReader(f))
        for r in got:
            if not r.get("rho_measured"):
                continue  # a run whose cells' CPU counters were not scraped
            rows.append({"session": where.name.split("-")[0], "app": r["app"], "share": float(r["share"]),
                         **{k: float(r[k]) for k in ("rate_per_s", "rho_measured", "measured_ms", "node-ps_fitted_ms")},
                         "measured_ci_ms": float(r["measured_ci_ms"]) if r.get("measured_ci_ms") else None})
    verdicts = []
    for app, share in dict.fromkeys((r["app"], r["share"]) for r in rows):
        mine = [r for r in rows if (r["app"], r["share"]) == (app, share)]
        print(f"\n{app} at {share:g} of the anchored saturation rate")
        print(f"  {'session':16s} {'rate/s':>7s} {'rho':>6s} {'busy ms/req':>11s} {'measured ms':>17s} "
              f"{'node-ps ms':>10s} {'error':>7s}")
        for r in mine:
            r["error_pct"] = 100 * (r["node-ps_fitted_ms"] - r["measured_ms"]) / r["measured_ms"]
            ci = f" ± {r['measured_ci_ms']:5.0f}" if r["measured_ci_ms"] is not None else " " * 8
            print(f"  {r['session']:16s} {r['rate_per_s']:7.3f} {r['rho_measured']:6.3f} "
                  f"{1000 * r['rho_measured'] / r['rate_per_s']:11.1f} {r['measured_ms']:9.1f}{ci} "
                  f"{r['node-ps_fitted_ms']:10.1f} {r['error_pct']:+6.1f}%")
        if len(mine) < 2:
            continue
        rho = np.array([r["rho_measured"] for r in mine])
        demand = 1000 * rho / np.array([r["rate_per_s"] for r in mine])
        wait = 1 / (1 - np.minimum(rho, 0.99))
        mae, half = mean_ci95([abs(r["error_pct"]) for r in mine])
        print(f"  over {len(mine)} sessions: busy ms per request {demand.min():.1f}-{demand.max():.1f} "
              f"(coefficient of variation {100 * demand.std(ddof=1) / demand.mean():.0f} %), ρ "
              f"{rho.min():.2f}-{rho.max():.2f}, waiting factor 1/(1 − ρ) {wait.min():.1f}-{wait.max():.1f}")
        ok = None if half is None else True if mae + half <= 15 else False if mae - half > 15 else None
        verdicts.append((f"{app} at {share:g}: node-ps's mean absolute error over {len(mine)} sessions "
                         f"{mae:.1f} % ± {half:.1f} within 15 %", ok))
    print()
    return show(verdicts)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("open_dirs", type=Path, nargs="+", metavar="OPEN_DIR", help="earlier studies.fidelity.open_loop "
                    "folders (their CSVs, the reread one when there is one)")
    return across(ap.parse_args().open_dirs)


if __name__ == "__main__":
    sys.exit(main())
