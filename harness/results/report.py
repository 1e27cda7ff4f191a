"""``harness report``: figures (REACH Figs. 8-11 for your own runs), tables, one HTML page.

Writes into ``out``: ``report.html`` (self-contained: images embedded, opens offline), every
figure as PNG, every table as CSV and Markdown, and ``problems.txt`` when some input was
missing or corrupt (the rest is still built).
"""

from __future__ import annotations

import base64
import html
import io
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from harness.results.collect import Collected, Run, ok_requests, sim_vs_real
from harness.results.stats import mean_ci95, spearman
from harness.results.summary import fmt, ok_mask

COLOURS = {"fault": "tab:red", "recovery": "tab:olive", "move": "tab:green", "scale": "tab:blue"}


def markers() -> dict[str, str]:
    """Event kind -> marker category, from the event catalogue (fault kinds declare theirs)."""
    from harness import events, faults

    faults.load_all()
    return events.markers()


@dataclass
class Section:
    title: str
    text: str = ""
    figures: list[tuple[str, bytes]] = field(default_factory=list)  # (file name, PNG)
    tables: list[tuple[str, pd.DataFrame]] = field(default_factory=list)  # (name, table)


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return buf.getvalue()


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


# ------------------------------------------------------------------ sections
def latency_over_time(runs: list[Run], window: int = 30) -> Section:
    """REACH Figs. 9-10: each request a point, the moving average, the mean dashed, event markers."""
    plt = _plt()
    runs = [r for r in runs if r.requests is not None and len(r.requests)]
    sec = Section("Latency over time", f"Every request of every run, one panel a run on one shared latency axis; "
                  f"line: moving average over {window} requests; dashed: the run's mean; markers: faults (red), moves "
                  "(green), scale events (blue).")
    if not runs:
        return sec
    fig, axes = plt.subplots(len(runs), 1, figsize=(10, 2.4 * len(runs)), sharex=True, sharey=True, squeeze=False)
    for ax, run in zip(axes[:, 0], runs):
        ok = ok_requests(run).sort_values("t_send")
        t0 = run.t0 or float(ok.t_send.min())
        t = ok.t_send.to_numpy() - t0
        y = ok.latency_ms.to_numpy()
        ax.scatter(t, y, s=4, alpha=0.35, color="tab:gray", label="request")
        if len(y) >= 2:
            ma = pd.Series(y).rolling(min(window, len(y)), min_periods=1).mean()
            ax.plot(t, ma, color="tab:purple", lw=1.4, label=f"moving average ({window})")
        mean = run.summary.get("mean_ms")
        if mean is not None:
            ax.axhline(mean, ls="--", color="black", lw=1, label=f"mean {mean:.1f} ms")
        seen = set()
        marks = markers()
        for e in run.events:
            if e["kind"] in marks:
                name = marks[e["kind"]]
                ax.axvline(e["t"] - t0, color=COLOURS.get(name, "tab:gray"), lw=0.8 if name == "move" else 1.5,
                           alpha=0.7, label=name if name not in seen else None)
                seen.add(name)
        ax.set_ylabel("ms")
        ax.set_title(run.label, fontsize=9, loc="left")
        ax.legend(fontsize=7, loc="upper right", ncol=3)
    axes[-1, 0].set_xlabel("seconds since the load started")
    sec.figures.append(("latency_over_time.png", _png(fig)))
    return sec


def rps_over_time(runs: list[Run]) -> Section:
    """REACH Fig. 11: successful requests per second, one line per run."""
    plt = _plt()
    sec = Section("Requests per second", "Successful requests per one-second bin.")
    runs = [r for r in runs if r.requests is not None and len(r.requests)]
    if not runs:
        return sec
    fig, ax = plt.subplots(figsize=(10, 3.2))
    for run in runs:
        ok = ok_requests(run)
        t0 = run.t0 or float(ok.t_send.min())
        sec_bins = np.floor(ok.t_send.to_numpy() - t0).astype(int)
        if len(sec_bins):
            counts = np.bincount(sec_bins[sec_bins >= 0])
            ax.plot(np.arange(len(counts)), counts, lw=1, label=run.label)
    ax.set_xlabel("seconds since the load started")
    ax.set_ylabel("requests/s")
    ax.legend(fontsize=7, ncol=4)
    sec.figures.append(("rps_over_time.png", _png(fig)))
    return sec


def tails(runs: list[Run], threshold_ms: float) -> Section:
    """Latency CDF per policy (seeds pooled) and each run's tails."""
    plt = _plt()
    sec = Section("Latency distribution and tails", f"CDF per policy over every successful request after the "
                  f"warm-up; the table is each run's summary (share under {threshold_ms:g} ms).")
    by_policy: dict[str, list[np.ndarray]] = {}
    for run in runs:
        if run.requests is None:
            continue
        ok = ok_requests(run)
        t0 = run.t0
        if t0 is not None:
            ok = ok[ok.t_send >= t0 + float(run.summary.get("warmup_s", 0) or 0)]
        by_policy.setdefault(run.policy, []).append(ok.latency_ms.to_numpy())
    if by_policy:
        fig, ax = plt.subplots(figsize=(7, 3.6))
        for policy, arrs in by_policy.items():
            v = np.sort(np.concatenate(arrs))
            if len(v):
                ax.plot(v, np.arange(1, len(v) + 1) / len(v), label=policy)
        ax.axvline(threshold_ms, color="gray", ls=":", lw=1)
        ax.set_xlabel("latency (ms)")
        ax.set_ylabel("share of requests")
        ax.legend(fontsize=8)
        sec.figures.append(("latency_cdf.png", _png(fig)))
    rows = []
    for run in runs:
        s = run.summary
        under = s.get("under_threshold")
        if threshold_ms != s.get("threshold_ms") and run.requests is not None:
            under = _under(run, threshold_ms)
        rows.append({"run": run.label, "policy": run.policy, "seed": run.seed, "requests": s.get("requests"),
                     "errors": s.get("errors"), "mean_ms": s.get("mean_ms"), "p50_ms": s.get("p50_ms"),
                     "p95_ms": s.get("p95_ms"), "p99_ms": s.get("p99_ms"), "max_ms": s.get("max_ms"),
                     f"under_{threshold_ms:g}ms": under, "rps": s.get("rps"), "moves": s.get("moves"),
                     "moved_share": s.get("moved_share"), "recovery_s": s.get("recovery_s")})
    sec.tables.append(("runs", pd.DataFrame(rows)))
    per_entry = [{"run": run.label, "policy": run.policy, "entry": e, **{k: st.get(k) for k in (
                  "requests", "errors", "mean_ms", "p50_ms", "p95_ms", "p99_ms", "rps")}}
                 for run in runs for e, st in (run.summary.get("entries") or {}).items()]
    if per_entry:  # several apps or entry services: each one's requests apart
        sec.tables.append(("entries", pd.DataFrame(per_entry)))
    return sec


def _under(run: Run, threshold_ms: float) -> float | None:
    s, df = run.summary, run.requests
    t0 = run.t0
    if t0 is None:
        return None
    win = df[(df.t_send >= t0 + float(s.get("warmup_s", 0) or 0)) & (df.t_send <= t0 + float(s.get("duration_s", 1e18)))]
    ok = win[ok_mask(win)]
    return round(float((ok.latency_ms < threshold_ms).sum() / len(win)), 4) if len(win) else None


def across_seeds(runs: list[Run], baseline: str | None) -> Section:
    sec = Section("Across seeds", "Mean latency over seeds (a policy's runs) with its 95 % confidence interval "
                  "(Student's t), and the improvement over the baseline policy's mean: (baseline - policy) / baseline.")
    by: dict[str, list[float]] = {}
    for run in runs:
        m = run.summary.get("mean_ms")
        if isinstance(m, (int, float)):
            by.setdefault(run.policy, []).append(float(m))
    if not by:
        return sec
    base_mean = mean_ci95(by[baseline])[0] if baseline in by else None
    rows = []
    for policy, vals in by.items():
        mean, half = mean_ci95(vals)
        rows.append({"policy": policy, "seeds": len(vals), "mean_ms": round(mean, 3),
                     "ci95_ms": None if half is None else round(half, 3),
                     "improvement_vs_" + (baseline or "baseline"): None if base_mean is None else
                     round((base_mean - mean) / base_mean, 4)})
    sec.tables.append(("seeds", pd.DataFrame(rows)))
    if baseline and baseline not in by:
        sec.text += f" (baseline {baseline!r} is not among the runs)"
    return sec


CARD = ("mean_ms", "p50_ms", "p95_ms", "p99_ms", "under_threshold", "errors")


def sim_vs_live(runs: list[Run]) -> Section:
    """The fidelity card: the same scenario and policies played in simulation (harness evaluate)
    and live (harness run). Per policy and world, each summary figure over the seeds with its 95 %
    interval; the simulator's error on p95 and on the share under the threshold; the
    Kolmogorov-Smirnov distance between the two worlds' latency distributions (as measured, and
    each divided by its own median, which a host's speed scales away); each world's rank on the
    mean and on p95, and how far the rankings agree (Spearman's ρ and Kendall's τ)."""
    from harness.results.stats import kendall_tau, ks_distance

    plt = _plt()
    sec = Section("Fidelity: simulation vs live", "Per scenario and policy, each world over its seeds: mean, p50, p95, "
                  "p99, the share under the threshold and the errors, each with its 95 % interval (Student's t); "
                  "p95_error: simulated p95 over live, minus 1; under_error: the shares' difference in points; "
                  "ks: the Kolmogorov-Smirnov distance between the two worlds' request latencies (ks_shape: each "
                  "divided by its median first, so a slower host does not count). Ranks (1: lowest) on the mean and "
                  "on p95 in both worlds, and their agreement: Spearman's ρ and Kendall's τ (1: the same order).")
    rows = []
    for scenario in dict.fromkeys(str(r.summary.get("scenario")) for r in runs):
        mine = [r for r in runs if str(r.summary.get("scenario")) == scenario]
        both = [p for p in dict.fromkeys(r.name for r in mine) if {r.world for r in mine if r.name == p} == {"sim", "live"}]
        if not both:
            continue
        table = []
        for p in both:
            row = {"scenario": scenario, "policy": p}
            lat = {}
            for world in ("sim", "live"):
                of = [r for r in mine if r.name == p and r.world == world]
                for key in CARD:
                    m, half = mean_ci95([float(r.summary[key]) for r in of
                                         if isinstance(r.summary.get(key), (int, float))] or [np.nan])
                    name = key[:-3] if key.endswith("_ms") else key
                    row[f"{world}_{name}"] = round(m, 4 if key == "under_threshold" else 2)
                    row[f"{world}_{name}_ci95"] = None if half is None else round(half, 4 if key == "under_threshold" else 2)
                row[f"{world}_runs"] = len(of)
                lat[world] = [ok_requests(r).latency_ms.to_numpy() for r in of]
            row["p95_error"] = round(row["sim_p95"] / row["live_p95"] - 1, 4) if row["live_p95"] else None
            row["under_error"] = round(row["sim_under_threshold"] - row["live_under_threshold"], 4)
            sim_all, live_all = (np.concatenate(lat[w]) if lat[w] else np.empty(0) for w in ("sim", "live"))
            row["ks"] = round(ks_distance(sim_all, live_all), 4)
            shaped = {w: np.concatenate([x / np.median(x) for x in lat[w] if len(x)]) if lat[w] else np.empty(0)
                      for w in ("sim", "live")}
            row["ks_shape"] = round(ks_distance(shaped["sim"], shaped["live"]), 4)
            table.append(row)
        for metric in ("mean", "p95"):
            for world in ("sim", "live"):
                order = np.argsort(np.argsort([r[f"{world}_{metric}"] for r in table], kind="stable"), kind="stable")
                for r, k in zip(table, order):
                    r[f"{world}_rank{'' if metric == 'mean' else '_p95'}"] = int(k) + 1
        agree = {}
        for metric, suffix in (("mean", ""), ("p95", "_p95")):
            sim_r, live_r = [r[f"sim_rank{suffix}"] for r in table], [r[f"live_rank{suffix}"] for r in table]
            agree[f"spearman_rho{suffix}"] = round(spearman(sim_r, live_r), 3) if len(table) > 2 else None
            agree[f"kendall_tau{suffix}"] = round(kendall_tau(sim_r, live_r), 3) if len(table) > 1 else None
        for r in table:
            r.update(agree)
        rows += table
        rho = agree["spearman_rho"]
        fig, ax = plt.subplots(figsize=(8, 3.2))
        x = np.arange(len(table))
        for k, (world, colour) in enumerate((("sim", "#8fb3d9"), ("live", "#d98f8f"))):
            ax.bar(x + (k - 0.5) * 0.38, [r[f"{world}_mean"] for r in table], 0.38, label=f"{world} mean", color=colour,
                   yerr=[r[f"{world}_mean_ci95"] or 0 for r in table], capsize=3)
            ax.scatter(x + (k - 0.5) * 0.38, [r[f"{world}_p95"] for r in table], marker="_", s=300, color="#333",
                       label="p95" if k else None, zorder=3)
        ax.set_xticks(x, [r["policy"] for r in table])
        ax.set_ylabel("latency (ms)")
        tau = agree["kendall_tau"]
        ax.set_title(f"{scenario}: simulation vs live" + ("" if tau is None else " (" + (
            "" if rho is None else f"Spearman ρ {rho:.2f}, ") + f"Kendall τ {tau:.2f})"))
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the bars: never over a p95 mark
        fig.tight_layout()
        sec.figures.append((f"sim_vs_live_{scenario}.png", _png(fig)))
    if rows:
        sec.tables.append(("fidelity_card", pd.DataFrame(rows)[list(CARD_COLUMNS)]))
        sec.tables.append(("sim_vs_live", pd.DataFrame(rows)))
    return sec


def summary(runs: list[Run], baseline: str | None) -> Section:
    """What a reader wants first: per policy (and world), its runs' mean and p95 latency and errors,
    each over the seeds with its 95 % interval, and the mean's ratio to the baseline's."""
    sec = Section("Summary", "Per policy, over its runs (seeds): mean and p95 latency with their 95 % intervals "
                  "(Student's t), errors per run, and the mean's ratio to the baseline's"
                  + (f" ({baseline})." if baseline else " (give --baseline POLICY)."))
    rows = []
    for policy in dict.fromkeys(r.policy for r in runs):
        of = [r.summary for r in runs if r.policy == policy]
        row = {"policy": policy, "runs": len(of)}
        for key in ("mean_ms", "p95_ms"):
            m, half = mean_ci95([float(x[key]) for x in of if isinstance(x.get(key), (int, float))] or [np.nan])
            row[key], row[f"{key[:-3]}_ci95_ms"] = round(m, 2), None if half is None else round(half, 2)
        row["errors"] = round(float(np.mean([x.get("errors") or 0 for x in of])), 2)
        rows.append(row)
    base = next((r["mean_ms"] for r in rows if r["policy"] == baseline), None)
    for r in rows:
        r["ratio_to_baseline"] = round(r["mean_ms"] / base, 3) if base else None
    sec.tables.append(("summary", pd.DataFrame(rows)))
    return sec


def models_used(runs: list[Run]) -> Section | None:
    """Which model each learned policy acted with, and what it was trained on (its provenance):
    a model trained on another profile than the run's is said."""
    import hashlib
    import json

    rows = []
    for run in runs:
        try:
            info = json.loads((run.path / "inputs" / "policy.json").read_text())
        except (OSError, ValueError):
            continue
        if not info.get("model"):
            continue
        prov = info.get("provenance") or {}
        known = (prov.get("profile") or {})
        try:
            from harness.spec.profile import Profile

            used = Profile.model_validate_json((run.path / "inputs" / "profile.json").read_text())
            used_sha = hashlib.sha256(used.model_dump_json().encode()).hexdigest()
        except (OSError, ValueError):
            used_sha = None
        rows.append({"run": run.label, "policy": run.name, "model": info["model"],
                     "model_sha256": (info.get("model_sha256") or "")[:12],
                     "trained_on": known.get("path") or info.get("trained_on_profile") or "(not recorded)",
                     "profile_matches": None if not known.get("sha256") or used_sha is None
                     else known["sha256"] == used_sha,
                     "recipe": prov.get("recipe"), "seed": prov.get("seed"),
                     "harness_commit": (prov.get("harness_commit") or "")[:10]})
    if not rows:
        return None
    sec = Section("Models", "The model each learned policy acted with and what it was trained on: the profile "
                  "(profile_matches: the same content as this run's profile), the recipe, the seed and harness's "
                  "commit (harness.policies.provenance). A model of another profile was trained for another "
                  "testbed or host.")
    sec.tables.append(("models", pd.DataFrame(rows).drop_duplicates(subset=["policy", "model"])))
    return sec


def fidelity(runs: list[Run]) -> Section:
    plt = _plt()
    sec = Section("Simulator vs real", "For each placement held during a run: the simulator's predicted latency "
                  "(REACH eqs. 2-9 on the profile) next to the measured mean of the requests sent while it held. "
                  "It tells whether a policy trained in simulation can be trusted on this testbed.")
    # the table names each row's model briefly ("calibrated", ...); the text says how, once
    rows, kinds = [], set()
    for run in runs:
        kind = model_kind(run)
        for r in sim_vs_real(run):
            rows.append({**r, "model": kind.split(" (")[0]})
            kinds.add(kind)
    if not rows:
        sec.text += " No placement interval with enough requests."
        return sec
    df = pd.DataFrame(rows)
    sec.text += " Model: " + "; ".join(sorted(kinds)) + "."
    sec.text += (" measured_ci_ms is the half-width of the measured mean's 95 % confidence interval (batch means "
                 "over time, as requests queued together are not independent): an error inside it is noise.")
    err, n = df.error_pct.to_numpy(), df.requests.to_numpy(float)
    # a placement held for seconds during a move counts as much as one held for minutes in the
    # plain mean; weighted by requests, the error is the one a request meets
    sec.text += (f" Overall: mean absolute error {np.mean(np.abs(err)):.1f} %, mean signed error {np.mean(err):+.1f} % "
                 f"over {len(df)} placements ({np.average(np.abs(err), weights=n):.1f} % and "
                 f"{np.average(err, weights=n):+.1f} % weighted by their requests); correlation "
                 f"{np.corrcoef(df.predicted_ms, df.measured_ms)[0, 1]:.2f}. A point's area is its requests."
                 if len(df) > 1 else f" One placement: error {err[0]:+.1f} %.")
    if "uncalibrated_error_pct" in df and df.uncalibrated_error_pct.notna().any():
        u = df.dropna(subset=["uncalibrated_error_pct"])
        before, w = u.uncalibrated_error_pct.to_numpy(), u.requests.to_numpy(float)
        sec.text += (f" Before calibration (REACH's equations on the profile it was made from, the same "
                     f"{len(u)} placements): mean absolute error {np.mean(np.abs(before)):.1f} %, mean signed "
                     f"{np.mean(before):+.1f} % ({np.average(np.abs(before), weights=w):.1f} % and "
                     f"{np.average(before, weights=w):+.1f} % weighted by requests); the table's "
                     f"uncalibrated_ms column.")
    if "closed_error_pct" in df and df.closed_error_pct.notna().any():
        c = df.dropna(subset=["closed_error_pct"])
        sec.text += (f" With several closed-loop users ({len(c)} placements), the queueing model's closed form "
                     f"(closed_ms: processor-sharing nodes, mean value analysis): mean absolute error "
                     f"{np.mean(np.abs(c.closed_error_pct)):.1f} %, against {np.mean(np.abs(c.error_pct)):.1f} % "
                     f"for the load-free model on the same placements.")
    fig, ax = plt.subplots(figsize=(5, 4.6))
    for policy, g in df.groupby("policy", sort=False):
        dots = ax.scatter(g.predicted_ms, g.measured_ms, s=6 + 120 * g.requests / max(1.0, float(n.max())),
                          alpha=0.7, label=policy)
        ci = g.dropna(subset=["measured_ci_ms"])
        if len(ci):  # the measured mean's 95 % interval: a point whose bar crosses the diagonal is within noise
            ax.errorbar(ci.predicted_ms, ci.measured_ms, yerr=ci.measured_ci_ms, fmt="none", lw=0.8, alpha=0.6,
                        ecolor=dots.get_facecolor()[0])
    spread = df.measured_ci_ms.fillna(0)
    lo = float(min(df.predicted_ms.min(), (df.measured_ms - spread).min())) * 0.95
    hi = float(max(df.predicted_ms.max(), (df.measured_ms + spread).max())) * 1.05
    ax.plot([lo, hi], [lo, hi], color="gray", ls="--", lw=1, label="predicted = measured")
    ax.set_xlabel("predicted (ms)")
    ax.set_ylabel("measured mean and its 95 % interval (ms)")
    ax.legend(fontsize=7)
    sec.figures.append(("sim_vs_real.png", _png(fig)))
    sec.tables.append(("sim_vs_real", df))
    return sec


def where_time_goes(runs: list[Run]) -> Section:
    """The model's terms against what the cells measured, per service and per call (results.breakdown)."""
    plt = _plt()
    from harness.results.breakdown import breakdown, per_run
    from harness.spec.app import load_app

    sec = Section("Where the time goes", "Per run, over the placements it held (weighted by requests): each part of "
                  "the simulator's prediction next to what the cells measured — a service's execution (T_E, its "
                  "internal job), its calls (T_S − T_E, the external time) and whole processing time (T_S); one call's "
                  "network and HTTP time (D_S: the caller's external time less its callee's own, for a caller with one "
                  "group); the gateway (D_gateway: the client's latency less the entry service's time). A part far "
                  "off is the part of the model to calibrate (harness calibrate).")
    rows = []
    for run in runs:
        try:
            rows += breakdown(run, load_app(run.path / "inputs/app.json"))
        except Exception:  # noqa: BLE001 - an old or partial run (no app, no totals): left out, the rest shown
            continue
    table = per_run(rows)
    if table.empty:
        sec.text += " No run has the cells' time totals (runs made before they were pulled, or too short)."
        return sec
    sec.tables.append(("where_time_goes", table))
    sec.tables.append(("breakdown_intervals", pd.DataFrame(rows)))
    for label, g in table.groupby("run", sort=False):
        g = g[g.part != "service"]  # execution + calls say the same, apart
        names = [f"{p} {n}".strip() for p, n in zip(g.part, g.name)]
        fig, ax = plt.subplots(figsize=(7, 0.32 * len(g) + 1.2))
        y = np.arange(len(g))
        ax.barh(y - 0.2, g.predicted_ms, height=0.4, label="predicted", color="tab:blue")
        ax.barh(y + 0.2, g.measured_ms, height=0.4, label="measured", color="tab:orange")
        ax.set_yticks(y, names, fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel("ms per request of the part")
        ax.set_title(label, fontsize=9)
        ax.legend(fontsize=7)
        sec.figures.append((f"where_time_goes_{label.replace(' ', '_')}.png", _png(fig)))
    return sec


def model_kind(run: Run) -> str:
    """What model the run's predictions came from: REACH's as published, or calibrated (and how)."""
    import json

    try:
        cal = json.loads((run.path / "inputs/profile.json").read_text()).get("calibration")
    except (OSError, ValueError):
        return "unknown"
    if not cal:
        return "REACH's equations on the profile"
    return (f"calibrated ({cal.get('created', '')[:16]}: call overhead {cal.get('call_overhead_ms', 0):.2f} ms, "
            f"gateway overhead {cal.get('gateway_overhead_ms', 0):.2f} ms)")


def run_inputs(run: Run):
    """(nodes, requests) from the run's inputs/ (testbed state and app), or None when unreadable."""
    from harness.results import placement_metrics as pm
    from harness.spec.app import load_app
    from harness.spec.loader import load_model
    from harness.spec.testbed_state import TestbedState

    try:
        state = load_model(TestbedState, run.path / "inputs/testbed.yaml")
        app = load_app(run.path / "inputs/app.json")
    except Exception:  # noqa: BLE001 - an old or partial run: no placement metrics, the rest still shown
        return None
    return pm.nodes_of(state.nodes), pm.requests_of(app)


def placement_metrics(runs: list[Run]) -> Section:
    """Cost, edge ratio, rejections, Gini, migrations by kind, fragmentation; edge ratio and cost over time."""
    plt = _plt()
    from harness.results import placement_metrics as pm

    sec = Section("Placement metrics", "Deployment cost (a node's cost per hour while it hosts pods), edge ratio "
                  "(share of a service's pods on edge nodes, mean over services, time-weighted; std across services), "
                  "rejection rate (pods left pending), Gini of replicas across nodes and sites, migrations by the roles "
                  "of their nodes, edge fragmentation (mean over edge nodes of 1 - cpu share x memory share).")
    rows, curves = [], []
    for run in runs:
        inputs = run_inputs(run)
        m = run.summary.get("metrics")
        if inputs is None or not run.placements:
            continue
        nodes, requests = inputs
        t0 = run.t0 or float(run.placements[0]["t"])
        if m is None:
            end = t0 + float(run.summary.get("duration_s") or (run.placements[-1]["t"] - t0 + 1))
            m = pm.run_metrics(run.placements, run.events, nodes, requests, t0, end)
        rows.append({"run": run.label, "policy": run.policy, "edge_ratio": m.get("edge_ratio"),
                     "edge_ratio_std": m.get("edge_ratio_std"), "cost": m.get("cost"),
                     "cost_per_hour": m.get("cost_per_hour"), "rejection_rate": m.get("rejection_rate"),
                     "gini_nodes": m.get("gini_nodes"), "gini_sites": m.get("gini_sites"),
                     "edge_fragmentation": m.get("edge_fragmentation"),
                     "migrations": ", ".join(f"{k}: {v}" for k, v in sorted((m.get("migrations") or {}).items())) or "-"})
        curves.append((run, pm.over_time(run.placements, nodes, requests, t0)))
    if not rows:
        sec.text += " No run with its inputs and placements."
        return sec
    keys = ["edge_ratio"] + (["cost_per_hour"] if any(p["cost_per_hour"] for _, pts in curves for p in pts) else [])
    fig, axes = plt.subplots(len(keys), 1, figsize=(10, 2.3 * len(keys) + 0.3), sharex=True, squeeze=False)
    axes = axes[:, 0]
    for run, pts in curves:
        t = [p["t_s"] for p in pts] + [float(run.summary.get("duration_s") or pts[-1]["t_s"])]
        for ax, key in zip(axes, keys):
            v = [p[key] if p[key] is not None else np.nan for p in pts]
            ax.step(t, v + v[-1:], where="post", lw=1.2, label=run.label)
    axes[0].set_ylabel("edge ratio")
    axes[0].set_ylim(-0.05, 1.05)
    if len(keys) > 1:  # a cost plot only when some node has a cost
        axes[1].set_ylabel("cost per hour")
    axes[-1].set_xlabel("seconds since the load started")
    axes[0].legend(fontsize=7, ncol=4)
    sec.figures.append(("placement_over_time.png", _png(fig)))
    sec.tables.append(("placement_metrics", pd.DataFrame(rows)))
    over = pd.DataFrame([{"run": run.label, **p} for run, pts in curves for p in pts])
    sec.tables.append(("placement_over_time", over))
    return sec


def evaluation_bars(evals: list[tuple[Path, pd.DataFrame]]) -> Section:
    """REACH Fig. 8 in simulation: predicted latency per policy per pod count."""
    plt = _plt()
    sec = Section("REACH's Fig. 8 sweep in simulation (harness sweep)",
                  "Predicted end-to-end latency per policy and pod count. In the table, gap is each policy's "
                  "optimality gap: to the exact optimum where gap_reference is 'optimum', otherwise to the best "
                  "placement known, with gap_to_bound the gap to the solver's proven bound (≥ the true gap).")
    for path, df in evals:
        sizes = sorted(df.pods.unique())
        policies = list(dict.fromkeys(df.policy))
        fig, ax = plt.subplots(figsize=(8, 3.6))
        w = 0.8 / max(1, len(policies))
        for i, p in enumerate(policies):
            vals = [df[(df.policy == p) & (df.pods == n)].latency_ms.mean() for n in sizes]
            ax.bar(np.arange(len(sizes)) + i * w - 0.4 + w / 2, vals, w, label=p)
        ax.set_xticks(np.arange(len(sizes)), [f"{n} pods" for n in sizes])
        ax.set_ylabel("predicted latency (ms)")
        ax.set_title(path.name, fontsize=9, loc="left")
        ax.legend(fontsize=7, ncol=3)
        sec.figures.append((f"sweep_{path.stem}.png", _png(fig)))
        sec.tables.append((f"sweep_{path.stem}", df))
    return sec


def leaderboard(folder: Path) -> Section:
    """A leaderboard folder: per track and world (sim, live) the ranked table and the ratio to the
    track's reference (default unless the track names another) with its interval, the worlds' rank
    agreement, and the coverage matrix; every number is in leaderboard.csv, traceable to its run
    directory."""
    import json

    plt = _plt()
    meta = json.loads((folder / "leaderboard.json").read_text())
    worlds = [w for w in ("sim", "live") if (folder / f"ranked-{w}.csv").exists()]
    coverage = pd.read_csv(folder / "coverage.csv", keep_default_na=False)
    failed = meta.get("failed_cells") or []
    where = {"sim": "in simulation", "live": "live on the testbed"}
    rho = meta.get("sim_live_spearman") or {}
    agreement = ("; sim vs live, Spearman's ρ of the ranks: " + ", ".join(
        f"{t} {'-' if v is None else f'{v:.2f}'}" for t, v in rho.items())) if rho else ""
    ranked_in = {w: _ranked_csv(folder / f"ranked-{w}.csv") for w in worlds}
    one_cell = sorted({t for df in ranked_in.values() if "paired_by" in df  # older folders lack the column
                       for t in df.loc[df.paired_by == "seed", "track"]})
    by_seed = (f" (in {', '.join(one_cell)}, a track of one setting, over its seeds and paired seed by seed)"
               if one_cell else "")
    sec = Section(f"Leaderboard {meta['name']} v{meta['version']}",
                  f"Every policy on every track its abilities fit, {' and '.join(where[w] for w in worlds)}, on the one "
                  f"ground: seeds 0..{meta['seeds'] - 1} "
                  f"per (app, scenario), harness commit {str(meta.get('git_commit'))[:10]}, "
                  f"{meta.get('executor', 'pool')}, {meta['wall_s']} s"
                  f"{'' if meta.get('parts', 1) == 1 else ' in ' + str(meta['parts']) + ' parts (resumed)'}, {meta['rows']} numbers in "
                  f"{folder / 'leaderboard.csv'}; {len(failed)} failed cells"
                  f"{_interrupted(meta)}. Mean ± 95 % interval over the cells a "
                  f"policy ran; the ratio to the track's reference is paired cell by cell{by_seed}{agreement}.")
    for world, ranked in ranked_in.items():
        for track, t in ranked.groupby("track", sort=False):
            t = t.sort_values("rank")
            fig, ax = plt.subplots(figsize=(7, 0.3 * len(t) + 1))
            err = t.ratio_ci95.fillna(0).to_numpy(float)
            ax.barh(t.policy, t.ratio_to_reference, xerr=err, color="tab:blue" if world == "sim" else "tab:orange")
            ax.axvline(1.0, color="k", lw=0.8)
            ax.invert_yaxis()
            ax.set_xlabel(f"{t.metric.iloc[0]} / {t.reference.iloc[0]}'s ({t.better.iloc[0]} is better)")
            ax.set_title(f"{track}, {where[world]}", fontsize=9, loc="left")
            name = f"leaderboard_{track}_{world}"
            sec.figures.append((f"{name}.png", _png(fig)))
            sec.tables.append((name, t))
    sec.tables.append(("leaderboard_coverage", coverage))
    return sec


def _interrupted(meta: dict) -> str:
    """What a leaderboard stopped by Ctrl-C left out (nothing for one that ended)."""
    if not meta.get("interrupted"):
        return ""
    return (f"; interrupted (Ctrl-C): {meta.get('cells_left', 'some')} cells not played, these tables rank the cells "
            "played (harness leaderboard --resume plays the rest)")


def _ranked_csv(path: Path) -> pd.DataFrame:
    """A ranked table; one written before tracks named their reference has it as ``default``."""
    df = pd.read_csv(path)
    if "ratio_to_default" in df:
        df = df.rename(columns={"ratio_to_default": "ratio_to_reference"}).assign(reference="default")
    return df


# ------------------------------------------------------------------ output
def build(col: Collected, out: Path, baseline: str | None = None, threshold_ms: float = 250.0) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    sections: list[Section] = []
    if col.runs:
        sections += [summary(col.runs, baseline), latency_over_time(col.runs), rps_over_time(col.runs), tails(col.runs, threshold_ms),
                     across_seeds(col.runs, baseline), placement_metrics(col.runs)]
        if any(r.world == "live" for r in col.runs):  # the simulator against what a testbed measured: live runs only
            sections.append(fidelity([r for r in col.runs if r.world == "live"]))
        if live := [r for r in col.runs if r.world == "live"]:  # a simulated metrics.csv is the model's own
            sections.append(where_time_goes(live))
        if (models := models_used(col.runs)) is not None:
            sections.append(models)
        if len({r.world for r in col.runs}) > 1:
            sections.insert(0, sim_vs_live(col.runs))
    if col.evaluations:
        sections.append(evaluation_bars(col.evaluations))
    sections = [leaderboard(f) for f in col.leaderboards] + sections
    for sec in sections:
        for name, png in sec.figures:
            (out / name).write_bytes(png)
        for name, df in sec.tables:
            df.to_csv(out / f"{name}.csv", index=False)
            (out / f"{name}.md").write_text(markdown(df))
    problems = out / "problems.txt"
    if col.problems:
        problems.write_text("\n".join(col.problems) + "\n")
    elif problems.exists():
        problems.unlink()
    page = out / "report.html"
    page.write_text(render_html(sections, col.problems))
    return page


# the fidelity card's headline: what the simulator's goals are judged on (shown open in the page and
# printed by the CLI; the rest, means and p50/p99 with their intervals, in sim_vs_live.csv)
CARD_COLUMNS = ("scenario", "policy", "sim_p95", "live_p95", "p95_error", "sim_under_threshold", "live_under_threshold",
                "under_error", "sim_errors", "live_errors", "ks", "ks_shape", "kendall_tau", "kendall_tau_p95")


def card_text(folder: Path) -> str | None:
    """The fidelity card's headline columns as Markdown, when the report has one (both worlds)."""
    path = folder / "sim_vs_live.csv"
    if not path.exists():
        return None
    df = pd.read_csv(path)
    return markdown(df[[c for c in CARD_COLUMNS if c in df]])


def markdown(df: pd.DataFrame) -> str:
    cols = list(df.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(cell(v) for v in row) + " |")
    return "\n".join(lines) + "\n"


def cell(v) -> str:
    """How a number appears in every table of the report (HTML and Markdown alike)."""
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return "-"
    if isinstance(v, (np.integer,)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return fmt(float(v))
    return str(v)


FOLD_ROWS, FOLD_COLUMNS = 12, 14  # a table past either is folded in the page (its CSV holds it whole)
CSS = """body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1360px;padding:0 1em;color:#222}
details{margin:.6em 0}summary{cursor:pointer;color:#245}
h1{font-size:1.6em}h2{margin-top:2em;border-bottom:1px solid #ddd}table{border-collapse:collapse;font-size:.85em;margin:.8em 0}
td,th{border:1px solid #ccc;padding:.25em .5em;text-align:right}th{background:#f4f4f4}caption{text-align:left;font-weight:600;padding:.2em 0}img{max-width:100%}
.wide{overflow-x:auto}.problems{background:#fff4e5;border:1px solid #f0b35a;padding:.6em 1em}"""


def render_html(sections: list[Section], problems: list[str]) -> str:
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>harness report</title>",
             f"<style>{CSS}</style></head><body><h1>harness report</h1>"]
    if problems:
        parts.append("<div class='problems'><b>Some inputs could not be read; the rest is shown.</b><ul>")
        parts += [f"<li>{html.escape(p)}</li>" for p in problems]
        parts.append("</ul></div>")
    parts.append("<ul>" + "".join(f"<li><a href='#s{i}'>{html.escape(s.title)}</a></li>" for i, s in enumerate(sections)) + "</ul>")
    for i, sec in enumerate(sections):
        parts.append(f"<section id='s{i}'><h2>{html.escape(sec.title)}</h2><p>{html.escape(sec.text)}</p>")
        for name, png in sec.figures:
            parts.append(f"<figure><img alt='{html.escape(name)}' src='data:image/png;base64,"
                         f"{base64.b64encode(png).decode()}'></figure>")
        for name, df in sec.tables:
            fold = len(df) > FOLD_ROWS or len(df.columns) > FOLD_COLUMNS  # raw tables: open on demand
            if fold:
                parts.append(f"<details><summary>{html.escape(name)}.csv: {len(df)} rows × {len(df.columns)} "
                             "columns (show)</summary>")
            parts.append(f"<div class='wide'><table data-table='{html.escape(name)}'>"  # the caption: where it is saved
                         f"<caption>{html.escape(name)}.csv</caption><tr>" +
                         "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns) + "</tr>")
            for row in df.itertuples(index=False):
                parts.append("<tr>" + "".join(f"<td>{html.escape(cell(v))}</td>" for v in row) + "</tr>")
            parts.append("</table></div>" + ("</details>" if fold else ""))
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts)
