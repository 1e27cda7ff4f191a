"""What optimising the uncalibrated model costs on the calibrated one (no testbed needed): each
app's exact optimum (MILP) at 1 and 3 replicas per service under REACH's model as profiled and
under the calibrated model of an earlier ``studies.fidelity.closed`` session, both valued by the
calibrated one. A gap says a policy trained on the uncalibrated profile should be retrained.

    .venv/bin/python -m studies.fidelity.regret results/<utc>-fidelity [--testbed reach-local]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from harness.sim.topology import model_for
from harness.spec.profile import load_profile
from studies.fidelity.common import parser, shipped_app


def regret(args) -> int:
    """Would a policy optimised on REACH's uncalibrated model place differently? The exact optimum
    under each model, both valued by the calibrated one: a gap says the policy should be retrained."""
    from harness.solvers import reach_milp
    from harness.spec.testbed_state import load_state

    state = load_state(args.state_dir)  # None without a testbed: the profiles' nodes and RTTs serve
    testbed = state.name if state else args.testbed
    print(f"{'app':22s} {'pods':>4s} {'optimum (profile)':>18s} {'optimum (calibrated)':>21s} {'regret':>7s}")
    for name in args.apps.split(","):
        _, _, app, profile = shipped_app(name, testbed)
        calibrated = load_profile(args.fidelity_dir / name / f"{name}.{testbed}.calibrated.json")
        models = {k: model_for(app, p, state, rtt="configured") for k, p in (("profile", profile),
                                                                               ("calibrated", calibrated))}
        cal = models["calibrated"]
        for r in (1, 3):
            best = {}
            for k, m in models.items():
                prob = reach_milp.ReachProblem(
                    model=m, replicas=np.full(m.S, r), room_cpu=m.topo.cpus.copy(), room_memory_mib=m.topo.memory_mib.copy(),
                    cpu=np.array([app.cpu_request(s) for s in m.services]),
                    memory_mib=np.array([app.memory_request(s) for s in m.services]),
                    allowed=np.ones((m.S, len(m.topo.nodes)), bool), spread=np.zeros(m.S, bool))
                best[k] = float(cal.latency(reach_milp.solve(prob, time_limit=60).counts)[0])
            print(f"{name:22s} {r * cal.S:4d} {best['profile']:15.1f} ms {best['calibrated']:18.1f} ms "
                  f"{100 * (best['profile'] / best['calibrated'] - 1):6.1f}%", flush=True)
    return 0


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("fidelity_dir", type=Path, metavar="FIDELITY_DIR", help="an earlier studies.fidelity.closed "
                    "session's folder (its calibrated profiles)")
    ap.add_argument("--state-dir", type=Path, default=Path(".harness"))
    ap.add_argument("--testbed", default="reach-local", help="with no testbed up: the profiles' testbed")
    return regret(ap.parse_args())


if __name__ == "__main__":
    sys.exit(main())
