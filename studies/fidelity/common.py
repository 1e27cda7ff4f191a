"""What the simulator-fidelity study's modes share: the shipped apps, the run's window and the
requests its summary counts, the anchor's model, the node-ps capacity fit, and printing verdicts."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from harness import shipped
from harness.results.collect import find
from harness.results.csvfile import write_rows
from harness.results.summary import in_window, ok_mask, summarize
from harness.scenarios import calibration
from harness.sim.topology import model_for
from harness.spec.app import load_app
from harness.spec.profile import load_profile
from harness.testbed.speed import host_samples
from studies.common import verdict

APPS = ",".join(shipped.REACH_APPS)


def parser(doc: str) -> argparse.ArgumentParser:
    """A mode's command line: its docstring's first paragraph, and the apps it covers."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--apps", default=APPS)
    return ap


def shipped_app(name: str, testbed: str):
    """A shipped app and its committed profile on ``testbed``: (app file, profile file, app, profile)."""
    app_file, profile_file = shipped.workload(name), shipped.profile(name, testbed)
    return app_file, profile_file, load_app(app_file), load_profile(profile_file)


def finish(rows: list[dict], verdicts: list[tuple[str, bool | None]], path: Path) -> int:
    """Write the rows as CSV, print each verdict (``show``); 1 unless every one passed."""
    write_rows(path, rows)
    status = show(verdicts)
    print(f"wrote {path}")
    return status


def show(verdicts: list[tuple[str, bool | None]]) -> int:
    """Print each verdict (None: UNDECIDED, the measurement is too noisy to tell); 1 unless every
    one passed."""
    for text, ok in verdicts:
        print(f"{verdict(ok)} {text}")
    return 0 if verdicts and all(ok is True for _, ok in verdicts) else 1


def anchored(anchor_dir: Path, app, calibrated, state):
    """The model the anchor run measured: its execution times (``calibration.refreshed``), the
    little waiting at the anchor's rate taken out (``QueueingModel.at_rest``)."""
    from harness.sim.queueing import QueueingModel

    runs = find([anchor_dir]).runs
    model = model_for(app, calibration.refreshed(calibrated, app, state, runs), state, rtt="configured")
    X = model.counts(runs[0].placements[0]["placement"])
    return QueueingModel(model, "node-ps").at_rest(X, float(runs[0].placements[0]["predicted"]["rate_per_s"]))


def measured_ci(run) -> float | None:
    """The summary's 95 % half-width of the mean; for runs summarised before summaries had it, the
    run summarised again over the same window (``results.summary.summarize``)."""
    if "mean_ci95_ms" in run.summary:
        return run.summary["mean_ci95_ms"]
    t0, stop, warm = window(run)
    return summarize(run.requests, t0, stop, warm, run.summary["threshold_ms"])["mean_ci95_ms"]


def window(run) -> tuple[float, float, float]:
    """The window the run's summary covers: (start, stop, warm-up s); it counts the requests sent
    from start + warm-up to stop."""
    warm, t0 = float(run.summary.get("warmup_s", 0) or 0), run.t0 or 0
    return t0, t0 + warm + run.summary["window_s"], warm


def summarised(run) -> np.ndarray:
    """Which of the run's requests its summary's mean is over: the successful ones in ``window``."""
    return (in_window(run.requests, *window(run)) & ok_mask(run.requests)).to_numpy()


def host_reference(anchor_dir: Path) -> float | None:
    """The host's speed while the anchor measured the model's times: the mean of its samples (CPU ms
    of a fixed job, ``testbed.speed.host_samples``); None for runs made before runs recorded them."""
    ms = host_samples(find([anchor_dir]).runs[0].events)[1]
    return float(np.mean(ms)) if ms else None


def fit_capacity(runs: list[dict]) -> float:
    """The node-ps capacity (0.5-1) that best predicts these runs' measured means (least squares
    on the log of predicted over measured; a saturated prediction counts as far off)."""
    from harness.sim.queueing import QueueingModel

    grid = np.round(np.arange(0.5, 1.0001, 0.01), 2)
    cost = [sum(min(np.log(QueueingModel(r["_model"], "node-ps", c).latency(r["_X"], r["rate_per_s"])
                           / r["measured_ms"]) ** 2, 25.0) for r in runs) for c in grid]
    return float(grid[int(np.argmin(cost))])
