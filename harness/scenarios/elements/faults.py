"""The scenario's faults, each at its time, through its kind's plug-in (``harness.faults``)."""

from __future__ import annotations

SIMULATION_ASSUMES = ""  # each fault kind says its own


def wanted(sc) -> bool:
    return bool(sc.faults)


def driver(run):
    for fault in sorted(run.plan.scenario.faults, key=lambda f: f.at_s):
        wait = fault.at_s - run.t_run()
        if wait > 0:
            yield wait
        run.inject(fault, run.out.t0 + fault.at_s)
