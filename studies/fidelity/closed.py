"""How far the simulator's prediction is from the testbed, before and after calibration.

For each app: the calibration placements (harness.scenarios.calibration) and K other placements (random
feasible one-replica placements, chosen to span the range of predicted latencies) are measured
live in one session, taking turns, under steady closed-loop load. The calibration is fitted on
the calibration placements only; the table compares, on the K others, the measured mean latency
with the profile's model (REACH's equations as published) and with the calibrated model. Prints
the mean absolute error and the Spearman rank correlation of each, against the bar (≤ 10 %,
≥ 0.9), and writes fidelity.csv and one calibrated profile per app beside the runs. The other
modes start from its output folder: ``studies.fidelity.open_loop`` (open-loop load),
``studies.fidelity.regret`` (what the uncalibrated model costs a policy).

Needs a provisioned testbed (`harness provision`); about 6 minutes per app at --seconds 20.

    .venv/bin/python -m studies.fidelity.closed [--apps chain,aggregator-sequential,aggregator-parallel]
        [--seconds 20] [--placements 6] [--seed 0] [--repeat 1] [--out results]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from harness.results.collect import find
from harness.results.stats import spearman
from harness.scenarios import calibration
from harness.sim.topology import model_for
from harness.testbed.lock import exclusive
from harness.testbed.open import open_cluster
from studies.fidelity.common import finish, parser, shipped_app

MAE_BAR, SPEARMAN_BAR = 10.0, 0.9


def spread_placements(app, model, state, k: int, seed: int, avoid: list[dict]) -> dict[str, dict]:
    """k random one-replica placements that fit the nodes' CPU, at evenly spaced quantiles of the
    model's predicted latency (so a ranking has something to rank), none equal to ``avoid``."""
    rng = np.random.default_rng(seed)
    hosts = [n for n in state.nodes if n.role != "client"]
    seen, cands = {tuple(tuple(p[s]) for s in app.services) for p in avoid}, []
    for _ in range(2000):
        free = {n.name: n.cpus for n in hosts}
        p = {}
        for s in app.services:
            ok = [n.name for n in hosts if free[n.name] >= app.cpu_request(s) - 1e-9]
            node = ok[int(rng.integers(len(ok)))]
            free[node] -= app.cpu_request(s)
            p[s] = [node]
        key = tuple(tuple(p[s]) for s in app.services)
        if key not in seen:
            seen.add(key)
            cands.append((float(model.latency(model.counts(p))[0]), p))
    cands.sort(key=lambda c: c[0])
    picks = [cands[round(q * (len(cands) - 1))][1] for q in np.linspace(0, 1, k)]
    return {f"eval-{i + 1}": p for i, p in enumerate(picks)}


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("--seconds", type=float, default=20.0, help="measured seconds per placement")
    ap.add_argument("--placements", type=int, default=6, help="evaluation placements per app")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=1, help="rounds over all the placements (they take turns); "
                    "a placement's measured latency is the mean over its rounds")
    ap.add_argument("--state-dir", type=Path, default=Path(".harness"))
    ap.add_argument("--out", type=Path, default=Path("results"))
    args = ap.parse_args()
    where = args.out / f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-fidelity"
    rows, verdicts = [], []
    with exclusive(args.state_dir):
        cluster = open_cluster(args.state_dir)
        state = cluster.state
        for name in args.apps.split(","):
            app_file, profile_file, app, profile = shipped_app(name, state.name)
            before = model_for(app, profile, state, rtt="configured")
            cal = calibration.placements_to_measure(app, state)
            evals = spread_placements(app, before, state, args.placements, args.seed, list(cal.values()))
            print(f"{name}: measuring {len(cal)} calibration and {len(evals)} evaluation placements, "
                  f"{args.seconds:g} s each, {args.repeat} round(s)", flush=True)
            calibration.measure(cluster, state, args.state_dir, app, app_file, profile, profile_file,
                                {**cal, **evals}, args.seconds, where / name, rounds=args.repeat,
                                on_done=lambda s: print(f"  {s['policy']} s{s['seed']}: {s.get('mean_ms', float('nan')):.1f} "
                                                        f"ms over {s.get('requests', 0)} requests", flush=True))
            runs: dict[str, list] = {}
            for r in find([where / name]).runs:
                runs.setdefault(r.policy, []).append(r)
            fitted = calibration.fit(app, profile, state, [r for p in cal for r in runs[p]])
            calibrated = calibration.calibrated_profile(profile, fitted, [], cal, args.seconds,
                                                        str(profile_file))
            (where / name / f"{name}.{state.name}.calibrated.json").write_text(calibrated.model_dump_json(indent=1))
            after = model_for(app, calibrated, state, rtt="configured")
            app_rows = []
            for label, p in evals.items():
                measured = float(np.mean([r.summary["mean_ms"] for r in runs[label]]))
                b, a = (float(m.latency(m.counts(p))[0]) for m in (before, after))
                app_rows.append({"app": name, "placement": label, "nodes": " ".join(p[s][0] for s in app.services),
                                 "measured_ms": round(measured, 2), "model_ms": round(b, 2), "calibrated_ms": round(a, 2),
                                 "model_error_pct": round(100 * (b - measured) / measured, 2),
                                 "calibrated_error_pct": round(100 * (a - measured) / measured, 2)})
            rows += app_rows
            print(f"\n{name}: call overhead {fitted.call_overhead_ms:.2f} ms, gateway overhead "
                  f"{fitted.gateway_overhead_ms:.2f} ms")
            print(f"{'placement':10s} {'nodes':48s} {'measured':>9s} {'model':>16s} {'calibrated':>16s}")
            for r in app_rows:
                print(f"{r['placement']:10s} {r['nodes']:48s} {r['measured_ms']:9.1f} "
                      f"{r['model_ms']:8.1f} ({r['model_error_pct']:+5.1f}%) {r['calibrated_ms']:8.1f} "
                      f"({r['calibrated_error_pct']:+5.1f}%)")
            m = [r["measured_ms"] for r in app_rows]
            for what, key, err in (("model", "model_ms", "model_error_pct"),
                                   ("calibrated", "calibrated_ms", "calibrated_error_pct")):
                mae = float(np.mean([abs(r[err]) for r in app_rows]))
                rho = spearman(m, [r[key] for r in app_rows])
                print(f"{name} {what:10s}: mean absolute error {mae:5.1f} %, Spearman {rho:+.2f}")
                if what == "calibrated":
                    verdicts.append((f"{name}: calibrated MAE {mae:.1f} % ≤ {MAE_BAR:g} %", mae <= MAE_BAR))
                    verdicts.append((f"{name}: calibrated Spearman {rho:.2f} ≥ {SPEARMAN_BAR}", rho >= SPEARMAN_BAR))
            print(flush=True)
    return finish(rows, verdicts, where / "fidelity.csv")


if __name__ == "__main__":
    sys.exit(main())
