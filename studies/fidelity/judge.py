"""Judging open-loop runs: the queueing model (node-ps, erlang-c), the load-free models and the
request-by-request replay against what each run measured (``judge_open``), as ``open_loop``
measures them and ``reread`` judges them again with this version's models."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from harness.results.breakdown import node_busy
from harness.results.collect import find
from harness.results.stats import paired_error, within_bar
from harness.sim.topology import model_for
from harness.sim.trace_replay import host_slowdown, replay_ms
from harness.spec.profile import load_profile
from harness.testbed.speed import host_samples
from studies.fidelity.common import anchored, finish, fit_capacity, host_reference, measured_ci, shipped_app, summarised, window


def judge_open(where: Path, apps: list[str], state, csv_name: str = "fidelity_open.csv", lead_s: float = 60.0) -> int:
    """The queueing model (node-ps, erlang-c) and the load-free models against the open-loop runs
    in ``where`` (what ``open_loop`` measured; ``reread`` judges them again, no testbed needed).

    Each prediction comes from the app's anchor run alone. node-ps is printed with the ideal
    capacity (1) and with a capacity fitted leave-one-app-out: each app's from the other apps'
    runs only (``fit_capacity``), so no app's prediction has seen its own measurements; the bar is
    judged on the latter. Beside each: the utilisation ρ the model gives the busiest node and the
    one the cells' CPU counters measured there."""
    from harness.sim.queueing import DISCIPLINES, QueueingModel

    cores = json.loads((where / "cores.json").read_text())
    src = Path((where / "source.txt").read_text().strip())
    measured: dict[str, list[dict]] = {}
    for name in apps:
        _, _, app, profile = shipped_app(name, state.name)
        calibrated = load_profile(src / name / f"{name}.{state.name}.calibrated.json")
        now = anchored(where / name / "anchor", app, calibrated, state)
        before = model_for(app, profile, state, rtt="configured")
        after = model_for(app, calibrated, state, rtt="configured")
        measured[name] = []
        reference_ms = host_reference(where / name / "anchor")
        for share_dir in sorted((p for p in (where / name).iterdir() if p.is_dir() and p.name != "anchor"),
                                key=lambda p: float(p.name)):
            run = find([share_dir]).runs[0]
            placement = run.placements[0]["placement"]
            X = now.counts(placement)
            rate = float(run.placements[0]["predicted"]["rate_per_s"])
            rho = QueueingModel(now, "node-ps").node_load(X, rate)
            busiest = now.topo.nodes[int(np.argmax(rho))]
            # the utilisation the cells' CPU counters measured, from 15 s into the load on
            busy = node_busy(run.metrics, (run.t0 or 0) + 15, np.inf, cores) or {}
            r = {"app": name, "nodes": " ".join(placement[s][0] for s in app.services), "share": float(share_dir.name),
                 "rate_per_s": rate, "requests": run.summary.get("requests"),
                 "measured_ms": round(float(run.summary["mean_ms"]), 2),
                 "measured_ci_ms": measured_ci(run),
                 "busiest": busiest, "rho_model": round(float(rho.max()), 3),
                 "rho_measured": round(busy[busiest], 3) if busiest in busy else None,
                 "model_ms": round(float(before.latency(X)[0]), 2),
                 "calibrated_ms": round(float(after.latency(X)[0]), 2),
                 "anchored_ms": round(float(now.latency(X)[0]), 2),
                 **{f"{d}_ms": round(QueueingModel(now, d).latency(X, rate), 2) for d in DISCIPLINES},
                 **dict.fromkeys(REPLAY_COLUMNS),  # at the capacity fitted below
                 **ahead(run, now, X, busiest, float(rho.max()), cores, lead_s),
                 "_model": now, "_X": X, "_run": run, "_reference_ms": reference_ms}
            measured[name].append(r)
    out, verdicts = [], []
    everyone = [r for name in apps for r in measured[name]]
    print(f"\nnode-ps capacity fitted on every app's runs: {fit_capacity(everyone):.2f}")
    for name in apps:
        others = [r for r in everyone if r["app"] != name]
        cap = fit_capacity(others) if others else 1.0
        for r in measured[name]:
            r["capacity"] = cap
            r["node-ps_fitted_ms"] = round(QueueingModel(r["_model"], "node-ps", cap).latency(r["_X"], r["rate_per_s"]), 2)
            scale = r["rho_measured"] / r["rho_model"] if r["rho_measured"] and r["rho_model"] else None
            r.update(replayed(r["_run"], r["_model"], r["_X"], r["_reference_ms"], cap, scale))
            print(f"{name} at {r['share']:g}: " + ", ".join(f"{k} {v}" for k, v in r.items()
                                                          if k not in ("app", "share") and not k.startswith("_")),
                  flush=True)
            out.append({k: v for k, v in r.items() if not k.startswith("_")})
            err = abs(r["node-ps_fitted_ms"] - r["measured_ms"]) / r["measured_ms"]
            half = r["measured_ci_ms"]
            verdicts.append((f"{name} at {r['share']:g} of saturation: node-ps (capacity {cap:.2f}, fitted on the "
                             f"other apps) {r['node-ps_fitted_ms']:.1f} vs measured {r['measured_ms']:.1f}"
                             f"{noise(r['measured_ms'], half)}, within 15 % ({100 * err:.1f} %)",
                             within_bar(r["node-ps_fitted_ms"], r["measured_ms"], half, 0.15)))
            # judged at the anchor's host speed: following the sampled speed narrowed the light rates'
            # intervals but widened the high rates' (studies/fidelity/README.md, "Open-loop load"), so it
            # is shown, not judged
            rep, m = r["replay_ms"], r["measured_ms"]
            verdicts.append(paired(f"{name} at {r['share']:g}: node-ps (capacity {cap:.2f}) replayed on the run's "
                                   f"arrivals {rep:.1f} vs measured {m:.1f}", rep, m, r["replay_ci_ms"]))
            if r["replay_ahead_ms"] is not None:
                rep, m = r["replay_ahead_ms"], r["measured_ahead_ms"]
                verdicts.append(paired(f"{name} at {r['share']:g}: forecast from the first {lead_s:g} s's load "
                                       f"(ρ {r['rho_lead']}), replayed {rep:.1f} vs measured {m:.1f} after it",
                                       rep, m, r["replay_ahead_ci_ms"]))
        hi = out[-1]
        verdicts.append((f"{name} at {hi['share']:g}: queueing closer than the load-free anchored model "
                         f"({hi['node-ps_fitted_ms']:.1f} vs {hi['anchored_ms']:.1f}, measured {hi['measured_ms']:.1f}"
                         f"{noise(hi['measured_ms'], hi['measured_ci_ms'])})",
                         closer(hi["node-ps_fitted_ms"], hi["anchored_ms"], hi["measured_ms"], hi["measured_ci_ms"])))
    return finish(out, verdicts, where / csv_name)


REPLAY_COLUMNS = ("replay_ms", "replay_ci_ms", "replay_host_ms", "replay_host_ci_ms", "replay_load_ms",
                  "replay_load_ci_ms")


def replayed(run, model, X, reference_ms: float | None, capacity: float, load_scale: float | None) -> dict:
    """The queueing model replayed on the run's own arrivals (``sim.trace_replay``, at the node-ps
    ``capacity``): every request sent (failed ones loaded the nodes too) goes through
    processor-sharing nodes, and the mean over the summary's requests is set beside the measured
    one, with the 95 % interval of their paired difference. At the anchor's host speed; (when the
    runs sampled it) following the host's speed through the run; and, a diagnosis rather than a
    prediction, at the load the cells' CPU counters measured on the busiest node (``load_scale``:
    measured over predicted ρ at capacity 1; above 1 as a capacity 1/scale, work off the requests'
    path; below 1 as a host that much faster), which tells the discipline's error from the load's."""
    df = run.requests
    mine = summarised(run)
    t, measured = df.t_send.to_numpy()[mine], df.latency_ms.to_numpy()[mine]
    out = dict.fromkeys(REPLAY_COLUMNS)
    times, ms = host_samples(run.events)
    variants = {"replay": (capacity, None)}
    if ms and reference_ms:  # replay_host stays None for runs that did not sample the host
        variants["replay_host"] = (capacity, host_slowdown(times, ms, reference_ms))
    if load_scale:
        variants["replay_load"] = at_load(load_scale)
    for key, (cap, slowdown) in variants.items():
        predicted = replay_ms(model, X, df.t_send.to_numpy(), cap, slowdown=slowdown)[mine]
        _, p, half = paired_error(t, measured, predicted)
        out[f"{key}_ms"], out[f"{key}_ci_ms"] = round(p, 2), None if half is None else round(half, 2)
    return out


def paired(text: str, predicted: float, measured: float, half: float | None) -> tuple[str, bool | None]:
    """A replay's verdict: ``text``, the paired difference's 95 % half-width and the error, judged
    against the 15 % bar with that interval."""
    return (f"{text}, paired difference ± {half if half is not None else float('nan'):.1f}, within 15 % "
            f"({100 * (predicted - measured) / measured:+.1f} %)", within_bar(predicted, measured, half, 0.15))


def at_load(scale: float) -> tuple[float, tuple | None]:
    """The replay's (capacity, slowdown) for a load ``scale`` × the one the model predicts at
    capacity 1: above 1 as work off the requests' path (capacity 1/scale), below 1 as a host that
    much faster all through the run."""
    if scale >= 1:
        return 1 / scale, None
    return 1.0, (np.array([-np.inf, np.inf]), np.array([scale]))


AHEAD_COLUMNS = ("lead_s", "rho_lead", "measured_ahead_ms", "replay_ahead_ms", "replay_ahead_ci_ms")


def ahead(run, model, X, busiest: str, rho_model: float, cores: dict, lead_s: float) -> dict:
    """A forecast, not a diagnosis: the load the cells' CPU counters measured on the busiest node
    over the run's first ``lead_s`` seconds after its warm-up, and the replay at that load (as
    ``at_load``) set beside the measured mean of the requests sent after that lead only, with the
    95 % interval of their paired difference. It asks whether a minute of the load tells what the
    next minutes' latency will be — what a rescheduler watching a live cluster would have."""
    df = run.requests
    t0, stop, warm = window(run)
    start, cut = t0 + warm, t0 + warm + lead_s
    out = dict.fromkeys(AHEAD_COLUMNS)
    busy = node_busy(run.metrics, start, cut, cores) or {}
    if busiest not in busy or not rho_model or cut >= stop:
        return out
    later = summarised(run) & (df.t_send >= cut).to_numpy()
    cap, slowdown = at_load(busy[busiest] / rho_model)
    predicted = replay_ms(model, X, df.t_send.to_numpy(), cap, slowdown=slowdown)[later]
    m, p, half = paired_error(df.t_send.to_numpy()[later], df.latency_ms.to_numpy()[later], predicted)
    return {"lead_s": lead_s, "rho_lead": round(busy[busiest], 3), "measured_ahead_ms": round(m, 2),
            "replay_ahead_ms": round(p, 2), "replay_ahead_ci_ms": None if half is None else round(half, 2)}


def noise(measured: float, half: float | None) -> str:
    """' ± h (x %; about N× the run length for ± 5 %)': the measured mean's 95 % interval, and how
    much longer a run would need to be for an interval of ±5 % (the width falls as 1/√length)."""
    if half is None:
        return " (no interval: too short a run)"
    rel = half / measured
    longer = f"; about {(rel / 0.05) ** 2:.0f}× the run length for ±5 %" if rel > 0.05 else ""
    return f" ± {half:.1f} ({100 * rel:.0f} %{longer})"


def closer(queueing: float, load_free: float, measured: float, half: float | None) -> bool | None:
    """Is the queueing prediction closer than the load-free one to the true mean, for every mean
    in the measured interval (True), for none (False), or for some (None)? Being closer is a
    half-line in the true mean, so the interval's two ends decide."""
    if half is None:
        return None
    ends = [abs(queueing - m) < abs(load_free - m) for m in (measured - half, measured + half)]
    return ends[0] if ends[0] == ends[1] else None
