"""REACH under load, in simulation: the predicted latency each policy's placement gets with 1, 3
and 6 closed-loop users (traffic-surge's load; sim.queueing's closed form: processor-sharing
nodes, mean value analysis — one user is REACH's load-free model), over `harness evaluate`'s
scenarios. Compares a model trained under load (`harness train --load 1,6 --load-kind closed`)
with the committed one (trained without load) and the default scheduler; prints the table and
whether the load-aware model is at or below both at every load.

    .venv/bin/python -m studies.reach.under_load --loaded models/loaded/reach-chain.pt \
        [--committed models/reach-chain.pt] [--pods 4,12,20] [--users 1,3,6]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.policies import build
from harness.rescheduler.evaluate import run_policy
from harness.sim.ceenv import Dynamics, EnvConfig
from studies.common import PROFILE, dynamics, model


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--loaded", type=Path, required=True, help="a REACH model trained under closed-loop load")
    ap.add_argument("--committed", type=Path, help="the model trained without load (default: the committed one)")
    ap.add_argument("--app", default="chain")
    ap.add_argument("--profile", default=PROFILE)
    ap.add_argument("--pods", default="4,12,20")
    ap.add_argument("--users", default="1,3,6")
    ap.add_argument("--scenarios", type=int, default=10, help="evaluate's scenarios 0..n-1")
    a = ap.parse_args()
    users = [int(u) for u in a.users.split(",")]
    _, _, plain = dynamics(a.app, a.profile)
    # the same world, its latency taken under closed-loop users
    dyn = Dynamics(plain.model, EnvConfig(load=(1.0, float(max(users))), load_kind="closed"))
    policies = {"default": build("default"), "reach (committed)": build("reach", model=str(a.committed or model("reach", a.app))),
                "reach (under load)": build("reach", model=str(a.loaded))}
    seeds = list(range(a.scenarios))
    print(f"{a.app}: mean predicted latency (ms) over scenarios 0-{a.scenarios - 1}, closed-loop users")
    print(f"{'pods':>4} {'users':>5} " + " ".join(f"{p:>20}" for p in policies))
    ok = True
    for pods in (int(p) for p in a.pods.split(",")):
        for u in users:
            res = {name: run_policy(dyn, pol, name, pods, seeds, load=u).latency_ms for name, pol in policies.items()}
            print(f"{pods:>4} {u:>5} " + " ".join(f"{v:>20.2f}" for v in res.values()))
            best_other = min(res["default"], res["reach (committed)"])
            ok &= res["reach (under load)"] <= best_other * 1.01
    print(("PASS" if ok else "FAIL") + ": the model trained under load within 1 % of the best of the others, or below, "
          "at every size and load")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
