"""The validation grid: scenarios played live and in simulation with the same policies and seeds,
and the simulator's error on each, before (the profile's means only: today's simulator on a
profile without ``lifecycle`` and ``rtt_sd_ms``) and after (the measured pod start/stop times and
RTT spread drawn per pod and per request).

    .venv/bin/python -m studies.fidelity.grid --profiles DIR [--scenarios node-failure,...]
        [--policies default,cloud-first] [--repeats 3] [--out results/fidelity-grid]

DIR holds calibrated profiles of the scenarios' apps on the provisioned testbed (``harness
calibrate --app workloads/<app>.json --out DIR`` writes ``<app>.<testbed>.calibrated.json``, with
the measured lifecycle and RTT spread). Per scenario: ``harness run`` (live, the policies taking
turns within each seed), ``harness evaluate`` with those profiles (after) and with the same
profiles stripped of the two fields (before), then ``harness report`` of the live runs with each
simulation: its fidelity card (``sim_vs_live.csv``: p95 error, under-threshold error, KS distance,
Kendall's τ). Writes ``grid.csv`` (a row per scenario, policy and simulator) and prints the
before/after table. Each step is skipped when its folder is already complete, so a stopped grid
goes on where it stopped.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
from pathlib import Path

from harness.results.csvfile import write_rows

SCENARIOS = ("node-failure", "latency-shift", "traffic-surge", "replica-cycles", "two-apps")
NEW_FIELDS = ("lifecycle", "rtt_sd_ms")  # what issue 63's simulator reads from a profile
CARD = ("p95_error", "under_error", "ks", "ks_shape", "kendall_tau", "kendall_tau_p95", "sim_p95", "live_p95",
        "sim_under_threshold", "live_under_threshold", "sim_runs", "live_runs")


def profiles_dir(source: Path, out: Path, strip: bool) -> Path:
    """``out/profiles/<app>.<testbed>.json`` from each calibrated profile in ``source`` (what
    harness reads first from the folder it runs in); ``strip``: without the new fields."""
    folder = out / "profiles"
    folder.mkdir(parents=True, exist_ok=True)
    for f in sorted(source.glob("*.calibrated.json")):
        doc = json.loads(f.read_text())
        for key in NEW_FIELDS if strip else ():
            doc.pop(key, None)
        (folder / f.name.replace(".calibrated.json", ".json")).write_text(json.dumps(doc, indent=1))
    return out


def harness(args: list[str], cwd: Path) -> None:
    print("$ harness " + " ".join(args), f"(in {cwd})", flush=True)
    subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, check=True)


def session(folder: Path) -> Path | None:
    """The one session folder harness wrote into ``folder``, when it finished (its comparison.csv)."""
    done = [d for d in folder.glob("*/comparison.csv")] if folder.exists() else []
    return done[0].parent if done else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profiles", type=Path, required=True, help="calibrated profiles (harness calibrate --out)")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--policies", default="default,cloud-first")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("results/fidelity-grid"))
    args = parser.parse_args(argv)
    out = args.out.resolve()
    after = profiles_dir(args.profiles.resolve(), out / "after", strip=False)
    before = profiles_dir(args.profiles.resolve(), out / "before", strip=True)
    rows = []
    for scenario in args.scenarios.split(","):
        live = session(out / scenario / "live")
        if live is None:
            harness(["run", scenario, "--policy", args.policies, "--seeds", str(args.repeats),
                     "--out", str(out / scenario / "live")], cwd=after)
            live = session(out / scenario / "live")
        for which, cwd in (("before", before), ("after", after)):
            sim = session(out / scenario / f"sim-{which}")
            if sim is None:
                harness(["evaluate", scenario, "--policy", args.policies, "--seeds", str(args.repeats),
                         "--out", str(out / scenario / f"sim-{which}")], cwd=cwd)
                sim = session(out / scenario / f"sim-{which}")
            report = out / scenario / f"report-{which}"
            if not (report / "sim_vs_live.csv").exists():
                harness(["report", str(live), str(sim), "--out", str(report)], cwd=cwd)
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
