"""The elements of a scenario, each a plug-in like the fault kinds: one module with the part of the
scenario it plays (``wanted``), what it does at its times in either world (``driver``: a generator
that acts on the run, then yields the seconds until it acts again), what a simulated run assumes
of it where the simulator cannot do as the testbed does (``SIMULATION_ASSUMES``; where the
profile's pod lifecycle changes that, ``SIMULATION_ASSUMES_LIFECYCLE``), the event
kinds it writes (declared in ``harness.events``), and, if it must act before the app is
deployed, ``before_deploy(run)``. A run (``harness.scenarios.run.RunBase``) drives
every element its scenario wants: live each in its own thread on the wall clock, simulated in one
queue of virtual times.

A new element is one module here and its name in ``ELEMENTS``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from harness.spec.scenario import Scenario

# in this order a simulated run breaks ties between elements due at the same time
ELEMENTS = ("background", "faults", "load_changes", "replica_schedule", "request_stream", "autoscaler", "crash_watch",
            "rescheduler")


def modules() -> list[ModuleType]:
    return [importlib.import_module(f"{__name__}.{name}") for name in ELEMENTS]


def wanted(sc: Scenario) -> list[ModuleType]:
    """The elements this scenario has."""
    return [m for m in modules() if m.wanted(sc)]


def assumptions(sc: Scenario, lifecycle: bool = False) -> dict[str, str]:
    """What a simulated run of ``sc`` assumes, per element (and fault kind) it has; with the
    profile's pod ``lifecycle``, what an element (``SIMULATION_ASSUMES_LIFECYCLE``) or a fault kind
    (``simulation_assumes_lifecycle``) assumes then, where that differs."""
    from harness import faults

    def said(m) -> str:
        return getattr(m, "SIMULATION_ASSUMES_LIFECYCLE", m.SIMULATION_ASSUMES) if lifecycle else m.SIMULATION_ASSUMES
    out = {m.__name__.rsplit(".", 1)[1]: said(m) for m in wanted(sc) if said(m)}
    kinds = faults.load_all()
    for f in sc.faults:
        kind = kinds[f.kind]
        text = (getattr(kind, "simulation_assumes_lifecycle", "") if lifecycle else "") or kind.simulation_assumes
        if text:
            out[f"fault {f.kind}"] = text
    return out
