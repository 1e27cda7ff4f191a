"""The queueing model against open-loop load on the testbed.

On each app's median evaluation placement of an earlier ``studies.fidelity.closed`` session
(DIR): a sparse-load anchor that refreshes its execution times, then open-loop Poisson load at
two rates (shares of the saturation rate the anchored model gives the busiest node); the measured
mean against the load-free models and the queueing model (sim.queueing, both disciplines; node-ps
also with a node capacity fitted on the other apps); the bar: node-ps within 15 % at both rates,
and closer than the load-free anchored model at the higher one. Near saturation a run's mean
latency is itself uncertain (requests queue together: 30 s stretches of one run differ 2-5×), so
each measured mean carries its 95 % interval from batch means, and a bar is judged as an
equivalence test (results.stats.within_bar): PASS when it holds for every mean in the interval,
FAIL when for none, UNDECIDED when the run is too short to tell — with how much longer it would
need to be. Beside each: the utilisation ρ the model gives its busiest node and the utilisation the
cells' CPU counters measured there, which tells an error in the load (ρ off) from an error in the
queueing discipline (ρ right, waiting off). The same model is also replayed request by request on
the arrivals each run sent (``sim.trace_replay``, at the same fitted capacity), once at the
anchor's host speed and once following the host's speed the run sampled every 5 s; prediction and
measurement then share the arrivals' bursts, and the bar is judged (on the first) with the
interval of their paired difference. A forecast beside them (``--lead-s``): the load the cells
measured over each run's first minute, replayed over the rest of the run.

Needs a provisioned testbed (`harness provision`).

    .venv/bin/python -m studies.fidelity.open_loop results/<utc>-fidelity [--rates 0.25,0.7] [--seconds 90]
"""

from __future__ import annotations

import csv
import json
import sys
import time
from pathlib import Path

from harness.scenarios import calibration
from harness.sim.topology import model_for
from harness.spec.profile import load_profile
from harness.testbed.lock import exclusive
from harness.testbed.open import open_cluster
from studies.fidelity.common import anchored, parser, shipped_app
from studies.fidelity.judge import judge_open


def open_loop(args) -> int:
    """Measure, then judge (``judge_open``): open-loop Poisson load on each app's median evaluation
    placement of an earlier closed-loop run of this script.

    Each app's placement is first measured under sparse open-loop arrivals (``--anchor-share`` of
    the calibrated model's saturation rate) for ``--anchor-seconds`` — the host's speed drifts by
    up to 2x between a calibration and a later run — then at each of ``--rates``, shares of the
    saturation rate the anchored model (below) gives."""
    from harness.sim.queueing import QueueingModel

    src = args.fidelity_dir
    rows = list(csv.DictReader(open(src / "fidelity.csv")))
    where = args.out / f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-fidelity-open"
    shares = [float(x) for x in args.rates.split(",")]
    apps = args.apps.split(",")
    with exclusive(args.state_dir):
        cluster = open_cluster(args.state_dir)
        state = cluster.state
        cores = {n.name: n.cpus / cluster.cpu_scale(n.name) for n in state.nodes}  # CPU time a node really gets
        where.mkdir(parents=True, exist_ok=True)
        (where / "cores.json").write_text(json.dumps(cores))
        (where / "source.txt").write_text(str(src.resolve()))
        for name in apps:
            app_file, profile_file, app, profile = shipped_app(name, state.name)
            calibrated = load_profile(src / name / f"{name}.{state.name}.calibrated.json")
            mine = sorted((r for r in rows if r["app"] == name), key=lambda r: float(r["measured_ms"]))
            pick = mine[len(mine) // 2]
            placement = dict(zip(app.services, ([n] for n in pick["nodes"].split())))
            after = model_for(app, calibrated, state, rtt="configured")
            X = after.counts(placement)
            anchor_rate = round(args.anchor_share * QueueingModel(after, "node-ps").saturation_rate(X), 3)
            calibration.measure(cluster, state, args.state_dir, app, app_file, calibrated, profile_file,
                                {"anchor": placement}, args.anchor_seconds, where / name / "anchor",
                                load={"mode": "open", "steps": [{"at_s": 0, "value": anchor_rate}]})
            now = anchored(where / name / "anchor", app, calibrated, state)
            sat = QueueingModel(now, "node-ps").saturation_rate(X)
            print(f"{name}: placement {pick['nodes']}, anchor {anchor_rate} req/s, saturation {sat:.2f} req/s "
                  "(anchored, node-ps)", flush=True)
            for share in shares:
                calibration.measure(cluster, state, args.state_dir, app, app_file, calibrated, profile_file,
                                    {f"open-{share:g}": placement}, args.seconds, where / name / f"{share:g}",
                                    load={"mode": "open", "steps": [{"at_s": 0, "value": round(share * sat, 3)}]})
    return judge_open(where, apps, state, lead_s=args.lead_s)


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("fidelity_dir", type=Path, metavar="FIDELITY_DIR", help="an earlier studies.fidelity.closed "
                    "session's folder (its fidelity.csv and calibrated profiles)")
    ap.add_argument("--rates", default="0.25,0.7", help="rates as shares of the anchored model's saturation rate "
                    "of the placement's busiest node")
    ap.add_argument("--seconds", type=float, default=90.0, help="measured seconds per rate")
    ap.add_argument("--anchor-seconds", type=float, default=90.0, help="seconds of sparse open-loop load on the "
                    "placement first, whose execution times the predictions use")
    ap.add_argument("--anchor-share", type=float, default=0.1, help="the anchor's rate, as a share of the "
                    "calibrated model's saturation rate")
    ap.add_argument("--lead-s", type=float, default=60.0, help="the seconds of each run whose measured load the "
                    "forecast (replay_ahead_ms) uses, judged on the requests after them")
    ap.add_argument("--state-dir", type=Path, default=Path(".harness"))
    ap.add_argument("--out", type=Path, default=Path("results"))
    return open_loop(ap.parse_args())


if __name__ == "__main__":
    sys.exit(main())
