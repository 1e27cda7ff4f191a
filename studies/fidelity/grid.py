"""The validation grid: scenarios played live and in simulation with the same policies and seeds,
and the simulator's error on each, before (``--variability means``: every request at its
placement's mean and pods at once, the simulator before it drew anything per request, whose
closed-loop seeds were one run) and after (each request's job times, route and RTTs and each
pod's start and stop drawn from the calibrated profile).

    .venv/bin/python -m studies.fidelity.grid --profiles DIR [--scenarios node-failure,...]
        [--policies default,cloud-first] [--repeats 3] [--out results/fidelity-grid]

DIR holds calibrated profiles of the scenarios' apps on the provisioned testbed (``harness
calibrate --app workloads/<app>.json --out DIR`` writes ``<app>.<testbed>.calibrated.json``, with
the measured lifecycle and RTT spread). Per scenario: ``harness run`` (live, the policies taking
turns within each seed), ``harness evaluate`` with those profiles, drawn (after) and at the
means (before), then ``harness report`` of the live runs with each simulation: its fidelity card (``sim_vs_live.csv``: p95 error, under-threshold error, KS distance,
Kendall's τ). Writes ``grid.csv`` (a row per scenario, policy and simulator) and prints the
before/after table. Each step is skipped when its folder is already complete, so a stopped grid
goes on where it stopped.
"""

from __future__ import annotations

import argparse
import csv
import shutil
import subprocess
import sys
from pathlib import Path

from harness.results.csvfile import write_rows

SCENARIOS = ("node-failure", "latency-shift", "traffic-surge", "replica-cycles", "two-apps")
CARD = ("p95_error", "under_error", "ks", "ks_shape", "kendall_tau", "kendall_tau_p95", "sim_p95", "live_p95",
        "sim_under_threshold", "live_under_threshold", "sim_runs", "live_runs")


def profiles_dir(source: Path, out: Path) -> Path:
    """``out/profiles/<app>.<testbed>.json`` from each calibrated profile in ``source`` (what
    harness reads first from the folder it runs in)."""
    folder = out / "profiles"
    folder.mkdir(parents=True, exist_ok=True)
    for f in sorted(source.glob("*.calibrated.json")):
        (folder / f.name.replace(".calibrated.json", ".json")).write_text(f.read_text())
    return out


def harness(args: list[str], cwd: Path) -> None:
    print("$ harness " + " ".join(args), f"(in {cwd})", flush=True)
    subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, check=True)


def session(folder: Path, runs: int) -> Path | None:
    """The one session folder harness wrote into ``folder`` when it finished: its comparison.csv
    has ``runs`` rows (a run stopped part-way writes the rows it has)."""
    for f in folder.glob("*/comparison.csv") if folder.exists() else []:
        with open(f) as rows:
            if sum(1 for _ in csv.DictReader(rows)) >= runs:
                return f.parent
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profiles", type=Path, required=True, help="calibrated profiles (harness calibrate --out)")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--policies", default="default,cloud-first")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("results/fidelity-grid"))
    args = parser.parse_args(argv)
    out = args.out.resolve()
    cwd = profiles_dir(args.profiles.resolve(), out / "after")
    runs = args.repeats * len(args.policies.split(","))
    rows = []
    for scenario in args.scenarios.split(","):
        live = session(out / scenario / "live", runs)
        if live is None:
            harness(["run", scenario, "--policy", args.policies, "--seeds", str(args.repeats),
                     "--out", str(out / scenario / "live")], cwd=cwd)
            live = session(out / scenario / "live", runs)
        for which, variability in (("before", "means"), ("after", "drawn")):
            sim, report = out / scenario / f"sim-{which}", out / scenario / f"report-{which}"
            shutil.rmtree(sim, ignore_errors=True)
            shutil.rmtree(report, ignore_errors=True)
            harness(["evaluate", scenario, "--policy", args.policies, "--seeds", str(args.repeats),
                     "--variability", variability, "--out", str(sim)], cwd=cwd)
            harness(["report", str(live), str(session(sim, runs)), "--out", str(report)], cwd=cwd)
            with open(report / "sim_vs_live.csv") as f:
                for r in csv.DictReader(f):
                    rows.append({"scenario": scenario, "policy": r["policy"], "simulator": which,
                                 **{k: r.get(k, "") for k in CARD}})
    if rows:
        write_rows(out / "grid.csv", rows)
    print(f"\n{'scenario':16} {'policy':12} {'p95 err before→after':>22} {'under err':>18} {'KS':>14} {'τ':>10}")
    key = {(r["scenario"], r["policy"], r["simulator"]): r for r in rows}
    for s, p in dict.fromkeys((r["scenario"], r["policy"]) for r in rows):
        b, a = key.get((s, p, "before"), {}), key.get((s, p, "after"), {})
        pair = lambda k: f"{b.get(k, '-')}→{a.get(k, '-')}"  # noqa: E731
        print(f"{s:16} {p:12} {pair('p95_error'):>22} {pair('under_error'):>18} {pair('ks'):>14} {pair('kendall_tau'):>10}")
    print(f"\n{out / 'grid.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
