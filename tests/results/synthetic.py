"""Run directories written through the real RunDir and summary code, from synthetic requests."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from harness.results.rundir import RunDir
from harness.results.summary import read_requests, summarize


def make_run(path: Path, policy: str, seed: int, mean_ms: float, seconds: float = 150, draw: int = 0,
             uncalibrated: float | None = None, closed: float | None = None) -> Path:
    """A run directory of the run ``policy``, ``seed``: synthetic requests around ``mean_ms`` (drawn
    by the generator ``draw`` seeds), its placements predicted 10-15 % low;
    ``uncalibrated``: the runs' profile is calibrated, the model as published predicted this share of the mean;
    ``closed``: several closed-loop users, the queueing model's closed form predicted this share."""
    rng = np.random.default_rng(draw)
    out = RunDir(path)
    t0 = 1_800_000_000.0 + 1000 * draw
    out.t0 = t0
    out.event("deploy", t=t0 - 3, placement={"a": ["n1"]})
    out.event("load-start", t=t0)
    out.event("node-failure", t=t0 + seconds / 2, nodes=["n1"])
    out.event("move", t=t0 + seconds / 2 + 5, pod="a-1", target="n2")
    rows, t = [], t0
    while t < t0 + seconds:
        lat = max(20.0, rng.normal(mean_ms, mean_ms * 0.2))
        failed = rng.random() < 0.005
        rows.append(f"{t:.6f},{lat:.3f},{0 if failed else 200},100,{'ConnectionError' if failed else ''},a-1")
        t += lat / 1000
    out.requests_file.write_text("t_send,latency_ms,status,bytes,error,pod\n" + "\n".join(rows) + "\n")
    with open(path / "placements.jsonl", "w") as f:
        for k, (at, pred) in enumerate([(t0 - 3, mean_ms * 0.9), (t0 + seconds / 2 + 5, mean_ms * 0.85)]):
            rec = {"t": at, "t_run": at - t0, "reason": "deploy" if k == 0 else "move", "predicted_ms": pred,
                   "placement": {"a": ["n1"]}}
            rec["predicted"] = {"latency_ms": pred}
            if uncalibrated is not None:
                rec["predicted"]["uncalibrated_ms"] = mean_ms * uncalibrated
            if closed is not None:
                rec["predicted"].update(users=6, closed_ms=mean_ms * closed)
            f.write(json.dumps(rec) + "\n")
    s = summarize(read_requests(out.requests_file), t0, t0 + seconds, 5, 250)
    s.update({"policy": policy, "seed": seed, "scenario": "synthetic", "partial": False, "duration_s": seconds,
              "warmup_s": 5, "moves": 1, "moved_share": 0.25, "recovery_s": 1.5})
    out.summary(s)
    out.close()
    return path
