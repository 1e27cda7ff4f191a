"""Cost growth of ``harness evaluate`` on a generated continuum: wall time and peak memory of one
simulated hour against the nodes (10 → 10,000) and against the pods (10 → 10,000), per policy,
and the goal point: an hour of a 1,000-node continuum with 2,000 pods of a 120-service app in
at most 60 s on one core for the heuristics and KubeDSM. Reference in the same run: the smallest
point (10 nodes, 10 pods, the default policy); every time is also printed as a ratio to it.

    .venv/bin/python -m benchmarks.scale_cost [--out results/scale-cost] [--timeout 300] [--quick] [--replot CSV]

Each point is one ``harness evaluate`` in a process of its own, pinned to one core, its wall
time, CPU time and peak resident memory (ru_maxrss) read from ``os.wait4``; its files are what
``harness generate`` writes (``harness.generators``): the continuum, an app of ``--services``
services with the point's pods and its modelled profile, and an hour of a day-shaped open load
(``--rate`` requests/s on average, the rescheduler every ``--period`` s). The rollout places
with ``budget_s`` and the MILP (``cost-delay-milp``: paper 003's problem, the same app with the
gateway's data on an edge node and one pod per service, so its pods are its services) with
``time_limit_s`` = ``--budget``: both anytime. A point past ``--timeout`` is killed; a policy
that did not finish a point (killed, or it failed) is not tried at the larger sizes of that axis:
that size is where it stops being practical. Writes scale_cost.csv and scale_cost.png (log-log)
into ``--out`` and prints the table.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from harness.generators.callgraph import app as generated_app
from harness.generators.continuum import continuum
from harness.generators.day import scenario
from harness.generators.files import save
from harness.generators.profile import modelled_profile
from harness.results.csvfile import read_rows, write_rows

GOAL_S = 60.0
HEURISTICS = ("default", "latency-greedy", "kubedsm")


@dataclass(frozen=True)
class Point:
    axis: str  # nodes | pods | goal | reference
    policy: str
    nodes: int
    pods: int
    services: int


def points(args) -> list[Point]:
    sizes = [10, 100, 1000] if args.quick else [10, 100, 1000, 10000]
    out: list[Point] = []
    for policy in (*HEURISTICS, "rollout"):
        out += [Point("nodes", policy, n, 100, args.services) for n in sizes]
        out += [Point("pods", policy, 1000, p, args.services) for p in sizes]
    out += [Point("nodes", "cost-delay-milp", n, args.services, args.services) for n in sizes]
    out += [Point("pods", "cost-delay-milp", 1000, p, p) for p in sizes if p >= args.services]
    out += [Point("goal", policy, 1000, 2000, 120) for policy in HEURISTICS]
    return out


def policy_ref(policy: str, budget: float) -> str:
    if policy == "rollout":
        return f"rollout[budget_s={budget:g}]"
    if policy == "cost-delay-milp":
        return f"cost-delay-milp[time_limit_s={budget:g}]"
    return policy


def write_point(p: Point, folder: Path, rate: float, period: float) -> list[str]:
    """The point's files; the evaluate arguments that play them."""
    folder.mkdir(parents=True, exist_ok=True)
    inv = continuum(p.nodes, 0, "continuum")
    app = generated_app(p.services, 0, "app", pods=p.pods)
    if p.policy == "cost-delay-milp":  # paper 003's problem: the gateway's data on an edge node, one pod each
        app["sources"] = {app["gateway"]: next(n["name"] for n in inv["nodes"] if n["name"].startswith("edge"))}
    save(inv, folder / "inventory.yaml")
    save(app, folder / "app.json")
    save(modelled_profile(app, inv), folder / "profile.json")
    sc = scenario(str(folder / "app.json"), rate, 0, "hour", 3600.0, 60.0, rescheduler_period_s=period)
    save(sc, folder / "hour.yaml")
    return [str(folder / "hour.yaml"), "--inventory", str(folder / "inventory.yaml"), "--profile",
            str(folder / "profile.json"), "--seeds", "1", "--gap-time-limit", "0", "--json", "--out",
            str(folder / "results")]


def one_core() -> None:
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    os.setpgrp()


def run(p: Point, argv: list[str], timeout: float, budget: float) -> dict:
    """One ``harness evaluate`` in its own process: wall and CPU seconds, peak MB, its status."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "NUMBA_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "harness", "evaluate", *argv, "--policy", policy_ref(p.policy, budget)]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, preexec_fn=one_core)
        killed = False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - t > timeout:
                os.killpg(proc.pid, signal.SIGKILL)
                killed = True
                _, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.05)
        wall = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    row = {"wall_s": round(wall, 2), "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
           "peak_mb": round(usage.ru_maxrss / 1024, 1), "mean_ms": None}
    if killed:
        return row | {"status": f"killed after {timeout:g} s"}
    if proc.returncode != 0:
        last = [line for line in stderr.splitlines() if line.startswith("harness:") and "simulating" not in line]
        return row | {"status": f"failed ({last[-1] if last else f'exit {proc.returncode}'})"}
    summary = json.loads(stdout)[0]
    return row | {"status": "ok", "mean_ms": summary.get("mean_ms")}


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    for col, (axis, x) in enumerate((("nodes", "nodes"), ("pods", "pods"))):
        for row, (y, label) in enumerate((("wall_s", "wall time (s)"), ("peak_mb", "peak memory (MB)"))):
            ax = axes[row, col]
            for policy in dict.fromkeys(r["policy"] for r in rows if r["axis"] == axis):
                mine = [r for r in rows if r["axis"] == axis and r["policy"] == policy]
                ok = [r for r in mine if r["status"] == "ok"]
                line, = ax.plot([r[x] for r in ok], [r[y] for r in ok], marker="o", label=policy)
                bad = [r for r in mine if r["status"] != "ok"]
                ax.plot([r[x] for r in bad], [r[y] for r in bad], marker="x", linestyle="none", color=line.get_color())
            goal = [r for r in rows if r["axis"] == "goal" and r["status"] == "ok"]
            if axis == "pods" and goal:
                ax.plot([r["pods"] for r in goal], [r[y] for r in goal], marker="*", markersize=12, linestyle="none",
                        color="k", label="goal point (1,000 nodes, 120 services)")
                if y == "wall_s":
                    ax.axhline(GOAL_S, color="k", linestyle=":", linewidth=1)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel(x + (" (100 pods)" if axis == "nodes" else " (1,000 nodes)"))
            ax.set_ylabel(label)
            ax.grid(True, which="both", alpha=0.3)
    ref = next((r for r in rows if r["axis"] == "reference"), None)
    for ax, y in ((axes[0, 0], "wall_s"), (axes[0, 1], "wall_s"), (axes[1, 0], "peak_mb"), (axes[1, 1], "peak_mb")):
        if ref is not None:
            ax.axhline(ref[y], color="grey", linestyle="--", linewidth=1)
    handles, labels = axes[0, 1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=9)
    fig.suptitle("harness evaluate, one simulated hour of a generated continuum (x: killed or failed; dashed: the "
                 "reference, 10 nodes and 10 pods; dotted: the 60 s goal)", fontsize=10)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(path, dpi=120)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("results/scale-cost"), help="where the CSV and PNG go")
    ap.add_argument("--timeout", type=float, default=300.0, help="a point's wall-clock limit, s")
    ap.add_argument("--budget", type=float, default=10.0, help="the rollout's and the MILP's budget per decision, s")
    ap.add_argument("--services", type=int, default=10, help="the app's services on the nodes and pods axes")
    ap.add_argument("--rate", type=float, default=5.0, help="requests/s on average over the hour")
    ap.add_argument("--period", type=float, default=600.0, help="the rescheduler's period, s")
    ap.add_argument("--quick", action="store_true", help="sizes up to 1,000 only")
    ap.add_argument("--replot", type=Path, help="only draw scale_cost.png again from this scale_cost.csv")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.replot:
        plot(read_rows(args.replot), args.out / "scale_cost.png")
        print(f"wrote {args.out / 'scale_cost.png'}")
        return 0
    work = Path(tempfile.mkdtemp(prefix="scale-cost-"))
    ref = Point("reference", "default", 10, 10, args.services)
    ref_argv = write_point(ref, work / "reference", args.rate, args.period)
    run(ref, ref_argv, args.timeout, args.budget)  # compiles and caches the kernels: not measured
    reference = run(ref, ref_argv, args.timeout, args.budget)
    rows = [{"axis": "reference", "policy": "default", "nodes": 10, "pods": 10, "services": args.services}
            | reference | {"ratio": 1.0}]
    print(f"reference (10 nodes, 10 pods, default): {reference['wall_s']:.2f} s, {reference['peak_mb']:.0f} MB",
          file=sys.stderr, flush=True)
    given_up: set[tuple[str, str]] = set()
    for k, p in enumerate(points(args)):
        row = {"axis": p.axis, "policy": p.policy, "nodes": p.nodes, "pods": p.pods, "services": p.services}
        if (p.axis, p.policy) in given_up:
            rows.append(row | {"wall_s": None, "cpu_s": None, "peak_mb": None, "mean_ms": None, "ratio": None,
                               "status": "skipped: a smaller size did not finish"})
            continue
        argv = write_point(p, work / f"p{k}", args.rate, args.period)
        result = run(p, argv, args.timeout, args.budget)
        rows.append(row | result | {"ratio": round(result["wall_s"] / reference["wall_s"], 2)})
        if result["status"] != "ok":
            given_up.add((p.axis, p.policy))
        print(f"{p.axis:6s} {p.policy:16s} {p.nodes:6d} nodes {p.pods:6d} pods: {result['wall_s']:7.1f} s "
              f"{result['peak_mb']:7.0f} MB  {result['status']}", file=sys.stderr, flush=True)
    fields = ["axis", "policy", "nodes", "pods", "services", "wall_s", "ratio", "cpu_s", "peak_mb", "mean_ms", "status"]
    write_rows(args.out / "scale_cost.csv", [{k: r.get(k) for k in fields} for r in rows])
    plot(rows, args.out / "scale_cost.png")
    print(",".join(fields))
    for r in rows:
        print(",".join("" if r.get(k) is None else str(r.get(k)) for k in fields))
    goal = [r for r in rows if r["axis"] == "goal"]
    met = all(r["status"] == "ok" and r["wall_s"] <= GOAL_S for r in goal)
    print(f"goal (an hour of 1,000 nodes and 2,000 pods in ≤ {GOAL_S:g} s, one core): "
          + ", ".join(f"{r['policy']} {r['wall_s']} s" for r in goal) + (" — met" if met else " — NOT met"))
    print(f"wrote {args.out / 'scale_cost.csv'} and {args.out / 'scale_cost.png'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
