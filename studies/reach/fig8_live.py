"""REACH's Fig. 8 measured live, as the paper measured it (§VII-C, on its testbed): Chain,
Aggregator-Sequential and Aggregator-Parallel at 4, 12 and 20 pods under REACH's steady load
(one closed-loop user), each policy's mean latency with a 95 % CI over seeds, and the paper's two
averages (REACH −21.56 % against the default scheduler, −9.83 % against RSDQL) beside harness's.

    .venv/bin/python -m studies.reach.fig8_live --profiles DIR [--seeds 3] [--duration 120]
        [--apps chain,aggregator-sequential,aggregator-parallel] [--pods 4,12,20]
        [--policies reach[model=auto],rsdql[model=auto],default,cloud-first,latency-greedy]
        [--out results/reach-fig8-live]

DIR holds the apps' profiles calibrated on the provisioned testbed (``harness calibrate --app
workloads/<app>.json --out DIR``); the learned policies' models are trained on them
(``model=auto``: once per profile, kept in ``<out>/models/auto``). Each app and pod count is a
scenario (``steady``'s shape with ``pods / 4`` replicas per service); each seed one ``harness run``
session with the policies taking turns, so the host's drift falls on all alike. A session
already complete is kept, so a stopped grid goes on where it stopped. Printed: the grid, and
each average as the mean over the nine settings of REACH's mean against the other's, minus 1,
with its 95 % CI over settings. Written: ``<out>/fig8.csv`` (a row per setting and policy).
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import yaml

from harness.results.csvfile import write_rows
from harness.results.stats import mean_ci95

APPS = ("chain", "aggregator-sequential", "aggregator-parallel")
POLICIES = "reach[model=auto],rsdql[model=auto],default,cloud-first,latency-greedy"
PAPER = {"default": -21.56, "rsdql": -9.83}  # % (REACH §VII-C, Fig. 8): REACH's mean latency against each
STEADY = Path(__file__).resolve().parents[2] / "harness" / "scenarios" / "steady.yaml"


def scenario_file(out: Path, app: str, pods: int, duration: float) -> Path:
    """``steady`` on ``app`` with ``pods`` pods (four services: pods / 4 replicas each)."""
    doc = yaml.safe_load(STEADY.read_text())
    doc.update(name=f"fig8-{app}-{pods}", app=app, replicas=pods // 4, duration_s=duration,
               description=f"Fig. 8: {app}, {pods} pods, one closed-loop user for {duration:g} s")
    f = out / "scenarios" / f"fig8-{app}-{pods}.yaml"
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(yaml.safe_dump(doc, sort_keys=False))
    return f


def complete(folder: Path, runs: int) -> Path | None:
    """The session folder in ``folder`` with ``runs`` whole runs (none partial or failed)."""
    for session in sorted(folder.glob("*/")) if folder.exists() else []:
        whole = [s for s in summaries(session) if not s.get("partial") and not s.get("error")]
        if len(whole) >= runs:
            return session
    return None


def summaries(session: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(session.glob("*/summary.json"))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profiles", type=Path, required=True, help="calibrated profiles (harness calibrate --out)")
    ap.add_argument("--apps", default=",".join(APPS))
    ap.add_argument("--pods", default="4,12,20")
    ap.add_argument("--policies", default=POLICIES)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--duration", type=float, default=120.0, help="seconds of load per run")
    ap.add_argument("--out", type=Path, default=Path("results/reach-fig8-live"))
    ap.add_argument("--table-only", action="store_true", help="print the table of the sessions there, run nothing")
    args = ap.parse_args(argv)
    out = args.out.resolve()
    (out / "profiles").mkdir(parents=True, exist_ok=True)
    for f in sorted(args.profiles.resolve().glob("*.calibrated.json")):  # what harness reads first where it runs
        (out / "profiles" / f.name.replace(".calibrated.json", ".json")).write_text(f.read_text())
    from harness.policies import split_refs

    policies = split_refs(args.policies)
    cells = [(app, int(p)) for app in args.apps.split(",") for p in args.pods.split(",")]
    for app, pods in cells if not args.table_only else []:
        sc = scenario_file(out, app, pods, args.duration)
        for seed in range(args.seeds):
            folder = out / f"{app}-{pods}" / f"s{seed}"
            if complete(folder, len(policies)):
                continue
            cmd = [sys.executable, "-m", "harness", "run", str(sc), "--policy", ",".join(policies), "--seeds", "1",
                   "--seed", str(seed), "--out", str(folder)]
            print("$ harness " + " ".join(cmd[3:]), flush=True)
            subprocess.run(cmd, cwd=out, check=True)
    return table(out, cells, policies)


def table(out: Path, cells: list[tuple[str, int]], policies: list[str]) -> int:
    rows, grid = [], {}
    for app, pods in cells:
        runs = [s for f in sorted((out / f"{app}-{pods}").glob("s*")) if (sess := complete(f, len(policies)))
                for s in summaries(sess)]
        for policy in dict.fromkeys(s["policy"] for s in runs):
            means = [s["mean_ms"] for s in runs if s["policy"] == policy and s.get("mean_ms") is not None]
            m, h = mean_ci95(means)
            grid[app, pods, policy.split("[")[0]] = m
            rows.append({"app": app, "pods": pods, "policy": policy, "seeds": len(means), "mean_ms": round(m, 2),
                         "ci95_ms": None if h is None else round(h, 2)})
    if not rows:
        print("no complete session yet", file=sys.stderr)
        return 1
    print(f"{'app':22s} {'pods':>4s} {'policy':28s} {'seeds':>5s} {'mean ms (95 % CI)':>20s}")
    for r in rows:
        ci = f" ± {r['ci95_ms']:.1f}" if r["ci95_ms"] is not None else ""
        print(f"{r['app']:22s} {r['pods']:4d} {r['policy']:28s} {r['seeds']:5d} {r['mean_ms']:12.1f}{ci:>8s}")
    print()
    for other, paper in PAPER.items():
        rel = [100 * (grid[a, p, "reach"] / grid[a, p, other] - 1) for a, p in cells
               if (a, p, "reach") in grid and (a, p, other) in grid]
        if rel:
            m, h = mean_ci95(rel)
            print(f"REACH against {other}: {m:+.2f} % ± {h or 0:.2f} over {len(rel)} settings (paper {paper:+.2f} %)")
    write_rows(out / "fig8.csv", rows)
    print(f"\n{out / 'fig8.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
