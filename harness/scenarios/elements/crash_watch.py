"""The crash watch: every second, a pod whose process died is replaced on its node (as kubelet
restarts a container); until then its callers see errors."""

from __future__ import annotations

SIMULATION_ASSUMES = "the replacement starts at once (live: a cell takes about 1 s)"
SIMULATION_ASSUMES_LIFECYCLE = ("the replacement serves after its start time, drawn from the profile's pod lifecycle; "
                                "the service is a replica short meanwhile")
PERIOD_S = 1.0


def wanted(sc) -> bool:
    return True


def driver(run):
    while True:
        yield PERIOD_S
        run.watch_crashes()
