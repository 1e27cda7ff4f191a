"""REACH's live figures measured live, as the paper measured them (§VII-C/D, on its testbed):
Chain, Aggregator-Sequential and Aggregator-Parallel under one closed-loop user, each policy's
mean latency and share of requests under 250 ms with a 95 % CI over seeds, the paper's numbers
beside harness's.

    .venv/bin/python -m studies.reach.live_grid --figure 8|9|10 --profiles DIR [--seeds 3] [--duration S]
        [--apps chain,aggregator-sequential,aggregator-parallel] [--pods 4,12,20]
        [--policies reach[model=auto],rsdql[model=auto],default,cloud-first,latency-greedy]
        [--out results/reach-fig8-live] [--table-only]

Figure 8: steady load at 4, 12 and 20 pods (the paper's averages: REACH −21.56 % against the
default scheduler, −9.83 % against RSDQL, each the mean over the nine settings of REACH's mean
against the other's). Figure 9: one Edge-A and one Cloud-A node failing at 60 s (``node-failure``)
at 12 pods (REACH on Chain 219.92 ms, 7.9 % below RSDQL; 86.9 % of its requests under 250 ms,
RSDQL's 76.9 %). Figure 10: a traffic surge (``traffic-surge``: 1 → 6 users at 90 s, the HPA at
50 % CPU; REACH on Chain 197.55 ms, RSDQL 207.29, default 255.12, 90 % under 250 ms), with REACH
both as for the other figures and trained under 1-6 users (``reach[model=auto:under-load]``).
Every REACH model is set against every other policy per setting (the mean over seeds of each
session's ratio, the policies of a session having run in turns): the mean of the per-setting
differences with its 95 % CI over settings, and in how many settings it is below.

DIR holds the apps' profiles calibrated on the provisioned testbed (``harness calibrate --app
workloads/<app>.json --out DIR``); the learned policies' models are trained on them
(``model=auto``: once per profile, kept in ``<out>/models/auto``; RSDQL trained with Table V's DQN,
3 M steps with no mask: ``rsdql[model=auto:paper]``, e.g. in a grid of its own with
``--policies 'rsdql[model=auto:paper],rsdql[model=auto]'``). Each app and pod count is a
scenario (the figure's scenario with ``pods / 4`` replicas per service); each seed one ``harness
run`` session with the policies taking turns, so the host's drift falls on all alike, each seed
starting one policy later (``session_order``: no policy always runs first). The grid goes seed
by seed, and a session already complete is kept, so a stopped grid goes on where it
stopped. Beside each run's mean over its whole window, its mean over the window's second half
(``late_ms``): a rescheduler starts from the default scheduler's placement and moves pods in the
first periods, and the paper does not say whether its means include that; and its mean and
requests per second after the scenario's change (the surge's step or the fault; Fig. 11's RPS
after the surge). Written:
``<out>/fig<N>.csv`` (a row per setting and policy) and ``<out>/fig<N>-paired.csv`` (REACH
against each other policy per setting, whole runs and second halves; ``best_baseline`` marks the
setting's other policy of lowest mean, the paper's "best baseline").
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

from harness.results.csvfile import write_rows
from harness.results.stats import mean_ci95

APPS = ("chain", "aggregator-sequential", "aggregator-parallel")
POLICIES = "reach[model=auto],rsdql[model=auto],default,cloud-first,latency-greedy"
SCENARIOS = Path(__file__).resolve().parents[2] / "harness" / "scenarios"


@dataclass(frozen=True)
class Figure:
    scenario: str
    pods: str
    averages: dict[str, float]  # other policy -> the paper's REACH against it, %, averaged over settings
    averages_of: tuple[str, ...] = APPS  # the apps the paper's averages cover: shown only over exactly these
    shares: dict[tuple[str, str], float] = field(default_factory=dict)  # (app, policy) -> paper's share < 250 ms
    means: dict[tuple[str, str], float] = field(default_factory=dict)  # (app, policy) -> paper's mean, ms
    rps_after: dict[tuple[str, str], float] = field(default_factory=dict)  # (app, policy) -> paper's RPS after the change
    policies: str = POLICIES


FIGURES = {
    "8": Figure("steady", "4,12,20", {"default": -21.56, "rsdql": -9.83}),
    "9": Figure("node-failure", "12", {"rsdql": -7.9}, averages_of=("chain",),
                shares={("chain", "reach"): 0.869, ("chain", "rsdql"): 0.769, ("chain", "cloud-first"): 0.355,
                        ("chain", "latency-greedy"): 0.462, ("chain", "default"): 0.467},
                means={("chain", "reach"): 219.92}),
    # the surge's REACH both as trained for every figure and trained under 1-6 users (harness's
    # recipe: the fast one loses the surge to default, studies/reach)
    "10": Figure("traffic-surge", "4", {},
                 shares={("chain", "reach"): 0.90, ("chain", "rsdql"): 0.89},
                 means={("chain", "reach"): 197.55, ("chain", "rsdql"): 207.29, ("chain", "cloud-first"): 258.77,
                        ("chain", "latency-greedy"): 258.02, ("chain", "default"): 255.12},
                 rps_after={("chain", "reach"): 26.62, ("chain", "rsdql"): 25.45},
                 policies="reach[model=auto],reach[model=auto:under-load]," + POLICIES.split(",", 1)[1]),
}


def scenario_file(out: Path, figure: Figure, app: str, pods: int, duration: float | None) -> Path:
    """The figure's scenario on ``app`` with ``pods`` pods (four services: pods / 4 replicas each)."""
    doc = yaml.safe_load((SCENARIOS / f"{figure.scenario}.yaml").read_text())
    doc.update(name=f"{figure.scenario}-{app}-{pods}", app=app, replicas=pods // 4)
    if duration:
        doc["duration_s"] = duration
    doc["description"] = f"{figure.scenario} on {app} at {pods} pods for {doc['duration_s']:g} s"
    f = out / "scenarios" / f"{figure.scenario}-{app}-{pods}.yaml"
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


def summaries(session: Path, late: bool = False) -> list[dict]:
    """Each run's summary; ``late``: with ``late_ms``, its mean latency over the second half of its
    requests' span (what the placement the policy settled on gives; None without a request log),
    and ``after_ms`` / ``rps_after`` after the scenario's change (``run_extras``)."""
    extras = run_extras(session) if late else {}
    return [{**(s := json.loads(p.read_text())), **extras.get(s.get("policy"), {"late_ms": None} if late else {})}
            for p in sorted(session.glob("*/summary.json"))]


def run_extras(session: Path) -> dict[str, dict]:
    """Per policy, from one read of its run's request log: ``late_ms`` and, where the session's
    scenario changes the world (the surge's step, or the fault: ``studies.reach.live``'s split),
    the mean latency and requests per second after the change."""
    from harness.results.collect import find
    from harness.spec.loader import load_model
    from harness.spec.scenario import Scenario
    from studies.reach.live import change_s, split

    f = next(session.glob("*/inputs/scenario.yaml"), None)
    at = change_s(load_model(Scenario, f)) if f else None
    out = {}
    for r in find([session]).runs:
        extra = {"late_ms": _late(r.requests) if r.requests is not None else None}
        if at is not None:
            extra.update((k, v) for k, v in split(r, at).items() if k in ("after_ms", "rps_after"))
        out[str(r.summary.get("policy"))] = extra
    return out


def late_mean(run: Path) -> float | None:
    from harness.results.summary import read_requests

    try:
        return _late(read_requests(run))
    except (FileNotFoundError, ValueError):
        return None


def _late(req) -> float | None:
    """The mean latency of the successful requests sent in the second half of the log's span."""
    from harness.results.summary import ok_mask

    ok = req[ok_mask(req)]
    late = ok[ok.t_send >= (req.t_send.min() + req.t_send.max()) / 2]
    return float(late.latency_ms.mean()) if len(late) else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--figure", choices=sorted(FIGURES), default="8")
    ap.add_argument("--profiles", type=Path, help="calibrated profiles (harness calibrate --out); needed to run")
    ap.add_argument("--apps", default=",".join(APPS))
    ap.add_argument("--pods", help="pod counts (default: the figure's)")
    ap.add_argument("--policies", help="default: the figure's (" + POLICIES + ")")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--duration", type=float, help="seconds per run (default: the scenario's)")
    ap.add_argument("--out", type=Path, help="default results/reach-fig<N>-live")
    ap.add_argument("--table-only", action="store_true", help="print the table of the sessions there, run nothing")
    args = ap.parse_args(argv)
    figure = FIGURES[args.figure]
    out = (args.out or Path(f"results/reach-fig{args.figure}-live")).resolve()
    from harness.policies import split_refs

    policies = split_refs(args.policies or figure.policies)
    cells = [(app, int(p)) for app in args.apps.split(",") for p in (args.pods or figure.pods).split(",")]
    if not args.table_only:
        if args.profiles is None:
            ap.error("--profiles DIR is needed to run (or --table-only)")
        (out / "profiles").mkdir(parents=True, exist_ok=True)
        for f in sorted(args.profiles.resolve().glob("*.calibrated.json")):  # what harness reads first where it runs
            (out / "profiles" / f.name.replace(".calibrated.json", ".json")).write_text(f.read_text())
        # seed by seed over the grid, so a grid stopped part-way has whole seeds of every setting
        for seed, (app, pods) in [(s, c) for s in range(args.seeds) for c in cells]:
            folder = out / f"{app}-{pods}" / f"s{seed}"
            if complete(folder, len(policies)):
                continue
            sc = scenario_file(out, figure, app, pods, args.duration)
            cmd = [sys.executable, "-m", "harness", "run", str(sc), "--policy", ",".join(session_order(policies, seed)),
                   "--seeds", "1", "--seed", str(seed), "--out", str(folder)]
            print("$ harness " + " ".join(cmd[3:]), flush=True)
            subprocess.run(cmd, cwd=out, check=True)
    return table(out, args.figure, cells, policies)


def session_order(policies: list[str], seed: int) -> list[str]:
    """The order the policies take turns in seed ``seed``'s session: rotated by one per seed, so
    that over as many seeds as policies each runs first once (the first run of a session meets
    the freshest host, and a scenario's first deployment)."""
    k = seed % len(policies)
    return policies[k:] + policies[:k]


def table(out: Path, name: str, cells: list[tuple[str, int]], policies: list[str]) -> int:
    figure = FIGURES[name]
    rows, grid, late = [], {}, {}
    for app, pods in cells:
        runs = [s for f in sorted((out / f"{app}-{pods}").glob("s*")) if (sess := complete(f, len(policies)))
                for s in summaries(sess, late=True)]
        present = {s["policy"] for s in runs}
        for policy in [p for p in policies if p in present] + sorted(present - set(policies)):
            mine = [s for s in runs if s["policy"] == policy and s.get("mean_ms") is not None]
            m, h = mean_ci95([s["mean_ms"] for s in mine])
            u, uh = _mean_ci95([s["under_threshold"] for s in mine if s.get("under_threshold") is not None])
            lm, lh = _mean_ci95([s["late_ms"] for s in mine if s.get("late_ms") is not None])
            am, _ = _mean_ci95([s["after_ms"] for s in mine if s.get("after_ms") is not None])
            ar, arh = _mean_ci95([s["rps_after"] for s in mine if s.get("rps_after") is not None])
            grid[app, pods, policy] = {s["seed"]: s["mean_ms"] for s in mine}
            late[app, pods, policy] = {s["seed"]: s["late_ms"] for s in mine if s.get("late_ms") is not None}
            short = _short(policy)
            rows.append({"app": app, "pods": pods, "policy": policy, "seeds": len(mine), "mean_ms": round(m, 2),
                         "ci95_ms": _round(h, 2), "under_250ms": _round(u, 4), "under_ci95": _round(uh, 4),
                         "late_ms": _round(lm, 2), "late_ci95_ms": _round(lh, 2),
                         "after_ms": _round(am, 2), "rps_after": _round(ar, 2), "rps_after_ci95": _round(arh, 2),
                         "paper_rps_after": figure.rps_after.get((app, short)),
                         "paper_mean_ms": figure.means.get((app, short)),
                         "paper_under_250ms": figure.shares.get((app, short))})
    if not rows:
        print("no complete session yet", file=sys.stderr)
        return 1
    print(f"{'app':22s} {'pods':>4s} {'policy':32s} {'seeds':>5s} {'mean ms (95 % CI)':>20s} {'< 250 ms':>16s}"
          f" {'2nd half ms':>18s} {'after the change: ms':>20s} {'RPS':>13s}")
    for r in rows:
        ci = f" ± {r['ci95_ms']:.1f}" if r["ci95_ms"] is not None else ""
        uci = f" ± {100 * r['under_ci95']:.1f}" if r["under_ci95"] is not None else ""
        paper = "".join(f"   (paper {v})" for v in (
            f"{r['paper_mean_ms']:.1f} ms" if r["paper_mean_ms"] is not None else None,
            f"{100 * r['paper_under_250ms']:.1f} %" if r["paper_under_250ms"] is not None else None,
            f"{r['paper_rps_after']} RPS after" if r["paper_rps_after"] is not None else None) if v)
        after = (f"{r['after_ms']:20.1f} {r['rps_after']:6.2f}" + (f" ± {r['rps_after_ci95']:.2f}" if r["rps_after_ci95"]
                 is not None else "       ")) if r["after_ms"] is not None else f"{'-':>20s} {'-':>13s}"
        lci = f" ± {r['late_ci95_ms']:.1f}" if r["late_ci95_ms"] is not None else ""
        share = f"{100 * r['under_250ms']:9.1f} %" if r["under_250ms"] is not None else f"{'-':>11s}"
        lm = f"{r['late_ms']:10.1f}" if r["late_ms"] is not None else f"{'-':>10s}"
        print(f"{r['app']:22s} {r['pods']:4d} {r['policy']:32s} {r['seeds']:5d} {r['mean_ms']:12.1f}{ci:>8s}"
              f" {share}{uci:>7s} {lm}{lci:>8s} {after}{paper}")
    print()
    refs = list(dict.fromkeys(r["policy"] for r in rows))
    paired: list[dict] = []  # REACH against each other policy per setting, paired by session
    for mine in (p for p in refs if _short(p) == "reach"):
        for other in (p for p in refs if _short(p) != "reach" or p != mine):
            if _short(other) == "reach" and refs.index(other) < refs.index(mine):
                continue  # each pair of REACH models once
            for what, means in (("", grid), (" (second halves)", late)):
                rel = {(a, p): r for a, p in cells
                       if (r := _paired(means.get((a, p, mine)), means.get((a, p, other)))) is not None}
                paper = figure.averages.get(_short(other)) if {a for a, _ in rel} == set(figure.averages_of) else None
                if rel:
                    m, h = mean_ci95(list(rel.values()))
                    below = sum(r < 0 for r in rel.values())
                    ci = f" ± {h:.2f}" if h is not None else ""  # one setting: no interval over settings
                    print(f"{mine} against {other}{what}: {m:+.2f} %{ci} over {len(rel)} settings, "
                          f"below in {below}" + (f" (paper {paper:+.2f} %)" if paper is not None else ""))
                    print("  per setting (± over seeds): " + ", ".join(
                        f"{a}-{p} {_setting(means[a, p, mine], means[a, p, other])}" for a, p in rel))
                    paired += [{"policy": mine, "against": other, "app": a, "pods": p, "half": what.strip(" ()") or
                                "whole", "seeds": len(_per_seed(means[a, p, mine], means[a, p, other])),
                                "pct": round(r, 2), "best_baseline": other == best_baseline(means, refs, a, p)}
                               for (a, p), r in rel.items()]
        against_best = [(a, p, b) for a, p in cells if (b := best_baseline(grid, refs, a, p)) and (a, p, mine) in grid]
        if against_best:  # the paper's "over the best baseline" (Figs 9-10, the other apps)
            print(f"{mine} against the best baseline (lowest mean of the others) per setting: " + ", ".join(
                f"{a}-{p} {b} {_setting(grid[a, p, mine], grid[a, p, b])}" for a, p, b in against_best))
    write_rows(out / f"fig{name}.csv", rows)
    print(f"\n{out / f'fig{name}.csv'}")
    if paired:
        print(f"{write_rows(out / f'fig{name}-paired.csv', paired)} (REACH against each, per setting)")
    return 0


def best_baseline(means: dict, refs: list[str], app: str, pods: int) -> str | None:
    """The policy other than REACH's with the lowest mean over seeds in this setting: the paper's
    "best baseline"."""
    seen = {p: np.mean(list(v.values())) for p in refs if _short(p) != "reach" and (v := means.get((app, pods, p)))}
    return min(seen, key=seen.get) if seen else None


def _per_seed(mine: dict | None, other: dict | None) -> list[float]:
    """Mine against other in one setting, %, per seed: each seed's session's ratio minus 1 (a
    session's policies ran in turns; the host's speed differs between sessions)."""
    return [100 * (mine[s] / other[s] - 1) for s in sorted(set(mine or {}) & set(other or {}))]


def _paired(mine: dict | None, other: dict | None) -> float | None:
    """Mine against other in one setting, %: the mean over seeds of ``_per_seed``."""
    per = _per_seed(mine, other)
    return float(np.mean(per)) if per else None


def _setting(mine: dict, other: dict) -> str:
    """One setting's paired difference as printed: its mean with the 95 % CI over seeds."""
    m, h = _mean_ci95(_per_seed(mine, other))
    return f"{m:+.1f} %" + (f" ± {h:.1f}" if h is not None else "")


def _short(policy: str) -> str:
    return policy.split("[")[0]


def _mean_ci95(values: list[float]) -> tuple[float | None, float | None]:
    return mean_ci95(values) if values else (None, None)


def _round(v: float | None, digits: int) -> float | None:
    return None if v is None else round(v, digits)


if __name__ == "__main__":
    sys.exit(main())
