"""SIL-GPO's deployments measured live on the ten-server local testbed, beside the model: the
analysis of a ``harness run`` session of a ``world: servicegraph`` scenario.

    harness --state-dir .harness-silgpo provision --inventory inventories/silgpo-local.yaml
    harness --state-dir .harness-silgpo run silgpo-edge --policy queue-greedy,preferred,sil-gpo \\
        --seeds 3 --model-dir studies/silgpo/models
    python -m studies.silgpo.live results/<utc>-silgpo-edge [more sessions: their seeds together]

The run plays each policy's deployment of the authors' instance (``harness.families.silgpo.live``:
built in the code's form, played in the paper's, the rates scaled so that the busiest queue of any
deployment runs at ρ 0.5), the policies taking turns within each seed. Printed here: per
deployment the measured mean latency over every request (mean ± 95 % CI over seeds), the model's
(the paper's T_r plus the testbed's RTTs on every hop), their difference; per request type the
mean and worst |error|; and each deployment's latency as a ratio to the first policy's, paired by
seed. Several sessions (a seed added later with ``--seeds 1 --seed N``) are read as one. Written:
``per_type.csv`` in the first session's folder.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import numpy as np

from harness.results.csvfile import write_rows
from harness.results.stats import mean_ci95
from studies.common import verdict

TOLERANCE = 0.15  # the bar: measured within 15 % of the model per request type


def shown(policy: str) -> str:
    """A policy as the table shows it: a model given by path by its file's name alone."""
    return re.sub(r"\[model=(?:[^\]]*/)?([^/\]]+?)(?:\.pt)?\]", r"[\1]", policy)


def runs_of(*sessions: Path) -> dict[str, list[dict]]:
    """Policy -> its runs' summaries (in seed order), as ``harness run`` wrote them in one session
    or several (each seed in one: a seed run again in a later session is a later repeat of it,
    and the earlier one is kept)."""
    out: dict[str, list[dict]] = {}
    whole = [json.loads(f.read_text()) for session in sessions for f in session.glob("*/summary.json")]
    whole = [s for s in whole if s.get("scenario_world") == "servicegraph" and not s.get("partial")
             and not s.get("error") and s.get("mean_ms") is not None]
    seen = set()
    for s in sorted(whole, key=lambda s: (s["seed"], s["started"])):  # the session's order: seed, then turn
        if (s["policy"], s["seed"]) not in seen:  # a seed's first run
            seen.add((s["policy"], s["seed"]))
            out.setdefault(s["policy"], []).append(s)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sessions", type=Path, nargs="+",
                    help="harness run session folders of a servicegraph scenario (their seeds together)")
    ap.add_argument("--reference", default=None, help="the policy the ratios are to (default: the first run's)")
    args = ap.parse_args()
    by_policy = runs_of(*args.sessions)
    if not by_policy:
        print(f"{', '.join(map(str, args.sessions))}: no whole run of a servicegraph scenario", file=sys.stderr)
        return 2
    ref_name = args.reference or next(iter(by_policy))  # the first policy of the session's first seed
    ref = {s["seed"]: s["mean_ms"] for s in by_policy.get(ref_name, [])}
    print(f"{'deployment':32s} {'seeds':>5s} {'measured ms':>18s} {'model ms':>9s} {'diff':>7s} {'types: mean |err|':>18s} "
          f"{'worst':>7s} {'within 15 %':>11s} {f'ratio to {ref_name}':>22s}")
    rows, ok_all = [], True
    for name, runs in by_policy.items():
        mean, half = mean_ci95([s["mean_ms"] for s in runs])
        model = float(np.mean([s["metrics"]["expected_ms"] for s in runs]))
        errs = {}
        for t in runs[0]["metrics"]["per_type"]:  # per type, the mean over seeds against the model
            measured = [p["measured_ms"] for s in runs for p in s["metrics"]["per_type"]
                        if p["type"] == t["type"] and p["measured_ms"] is not None]
            if measured:
                errs[t["type"]] = abs(np.mean(measured) / t["expected_ms"] - 1)
                rows.append({"deployment": name, "type": t["type"], "measured_ms": float(np.mean(measured)),
                             "model_ms": t["expected_ms"], "abs_error": errs[t["type"]]})
        if not errs:
            print(f"{shown(name)} no request type measured", file=sys.stderr)
            ok_all = False
            continue
        ok = max(errs.values()) <= TOLERANCE
        ok_all &= ok
        paired = [s["mean_ms"] / ref[s["seed"]] for s in runs if s["seed"] in ref]
        ratio, rhalf = mean_ci95(paired) if paired else (float("nan"), None)
        print(f"{shown(name):32s} {len(runs):5d} {mean:9.1f} ± {half or 0:6.1f} {model:9.1f} {100 * (mean / model - 1):+6.1f}% "
              f"{100 * np.mean(list(errs.values())):17.1f}% {100 * max(errs.values()):6.1f}% {verdict(ok):>11s} "
              f"{ratio:14.3f} ± {rhalf or 0:.3f}")
    print(f"\nper request type: {write_rows(args.sessions[0] / 'per_type.csv', rows)}; every request: "
          + ", ".join(f"{s}/*/requests.csv" for s in args.sessions))
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
