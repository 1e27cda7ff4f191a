"""REACH's simulated comparison (Fig. 8, the quality checks) played on harness's one ground, beside
the sweep `harness sweep` makes: each (app, pods, seed) becomes a scenario — the app with
pods/services replicas, REACH's seeded background utilisation (`background`), one closed-loop user
(REACH's model), one rescheduling round of up to max_steps moves — played by the run `harness
evaluate SCENARIO` makes; the latency is the model's for the placement the run ends with.

    .venv/bin/python -m studies.reach.ground [--apps chain] [--pods 4,12,20] [--scenarios 10] [--policies reach,default,cloud-first]

Prints per app, policy and size the sweep's mean latency and moves, the ground's, and their
difference; the same seeds in both, and the same RTTs (the inventory's configured ones, which a
run's view holds; the sweep otherwise takes the RTTs measured when the profile was made).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

from harness import shipped
from harness.policies import build
from harness.rescheduler.evaluate import run_policy
from harness.sim.ceenv import load_dynamics
from studies.common import PROFILE, REACH_APPS, model, profile_file, verdict
from studies.reach.quality import bar


def scenario_doc(app: str, pods: int, services: int, utilisation: tuple[float, float], max_moves: int) -> dict:
    lo, hi = utilisation
    return {"name": f"reach-{app}-{pods}", "description": f"REACH's Fig. 8 setting: {app}, {pods} pods, seeded background",
            "duration_s": 5, "warmup_s": 0, "app": app, "replicas": pods // services,
            "load": {"mode": "closed", "steps": [{"at_s": 0, "value": 1}]},
            "background": {"cpu": [lo, hi], "memory": [lo, hi]},
            "rescheduler": {"start_s": 1, "period_s": 1000, "max_moves": max_moves}}


def final_latency(run_dir: Path) -> float:
    """The model's latency for the placement the run ended with (its last placement record)."""
    last = json.loads((run_dir / "placements.jsonl").read_text().strip().splitlines()[-1])
    return float(last["predicted"]["latency_ms"])


def ground(app: str, pods: int, seeds: list[int], policies: dict, dyn, out: Path, state) -> dict[str, tuple[float, float]]:
    from harness.scenarios.session import prepare, run_simulated

    path = out / f"reach-{app}-{pods}.yaml"
    path.write_text(yaml.safe_dump(scenario_doc(app, pods, dyn.S, dyn.cfg.utilisation, dyn.cfg.max_steps), sort_keys=False))
    session = prepare(str(path), ["default"], state, None, shipped.find(PROFILE.format(app=app)), shipped.find("models"), out)
    session.policies = policies
    rows = run_simulated(state, session, len(seeds), first_seed=seeds[0])
    return {p: (float(np.mean([final_latency(Path(r["run_dir"])) for r in rows if r["policy"] == p])),
                float(np.mean([r["moves"] for r in rows if r["policy"] == p]))) for p in policies}


def quality_checks(app: str, pods: int, lat: dict[str, tuple[float, float]], moves: dict[str, tuple[float, float]]) -> list:
    """``studies.reach.quality``'s bar (``quality.bar``), judged on the sweep's and the ground's
    numbers: (name, sweep passed, ground passed)."""
    if "reach" not in lat:
        return []
    sweep = bar(app, pods, {p: v[0] for p, v in lat.items()}, moves["reach"][0])
    ground = bar(app, pods, {p: v[1] for p, v in lat.items()}, moves["reach"][1])
    return [(a[1], a[2], b[2]) for a, b in zip(sweep, ground)]


def main() -> int:
    from harness.spec.inventory import load_inventory
    from harness.testbed.simulated import simulated_state

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--apps", default=",".join(REACH_APPS))
    ap.add_argument("--pods", default="4,12,20")
    ap.add_argument("--scenarios", type=int, default=10)
    ap.add_argument("--policies", default="reach,default,cloud-first,optimal")
    args = ap.parse_args()
    seeds = list(range(args.scenarios))
    state = simulated_state(load_inventory(None))
    out = Path(tempfile.mkdtemp(prefix="reach-ground-"))
    testbed = out / "testbed.yaml"  # the sweep on the RTTs the ground's runs see (the inventory's), not the profile's
    testbed.write_text(yaml.safe_dump(state.model_dump(mode="json"), sort_keys=False))
    t0 = time.monotonic()
    print(f"{'app':22s} {'policy':12s} {'pods':>4s} {'sweep ms':>9s} {'ground ms':>9s} {'diff':>7s} {'moves':>11s}")
    worst, checks = 0.0, []
    for app in args.apps.split(","):
        _, _, dyn = load_dynamics(shipped.workload(app), profile_file(app), testbed)
        names = [p.strip() for p in args.policies.split(",")]
        for pods in (int(x) for x in args.pods.split(",")):
            def policies():
                return {n: build(n, model=str(model(n, app))) if n in ("reach", "rsdql") else build(n) for n in names}
            sweep = {n: run_policy(dyn, p, n, pods, seeds) for n, p in policies().items()}
            played = ground(app, pods, seeds, policies(), dyn, out, state)
            both = {n: (sweep[n].latency_ms, played[n][0]) for n in names if sweep[n] is not None}
            checks += quality_checks(app, pods, both, {n: (sweep[n].moves, played[n][1]) for n in both})
            for n in both:
                a, (b, moves) = sweep[n].latency_ms, played[n]
                worst = max(worst, abs(b / a - 1))
                print(f"{app:22s} {n:12s} {pods:4d} {a:9.2f} {b:9.2f} {b / a - 1:+7.2%} {sweep[n].moves:5.1f}/{moves:<5.1f}",
                      flush=True)
    for name, sweep_ok, ground_ok in checks:
        print(f"{verdict(sweep_ok):4s} sweep, {verdict(ground_ok):4s} ground  {name}")
    print(f"largest difference {worst:.2%}; seeds 0..{seeds[-1]}; {time.monotonic() - t0:.0f} s; runs in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
