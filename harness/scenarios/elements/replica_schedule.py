"""A replica schedule (KubeDSM's workloads): cycle k's counts at k x ``cycle_s``, bypassing the
autoscaler, so every policy meets the same demand at the same time (``late_s``: how late)."""

from __future__ import annotations

SIMULATION_ASSUMES = "new pods start at once; pods scaled down stop at once (live: a grace of 0.3 s)"


def wanted(sc) -> bool:
    return sc.replica_schedule is not None


def driver(run):
    sched = run.plan.scenario.replica_schedule
    for k, cycle in enumerate(sched.cycles):
        due = k * sched.cycle_s
        if k and due > run.t_run():
            yield due - run.t_run()
        run.event("replica-cycle", cycle=k, replicas=cycle, late_s=round(run.t_run() - due, 3))
        for service, want in cycle.items():
            run.scale_to(service, lambda mine, n=want: (n, {"reason": "schedule"}))
        run.record_placement(f"cycle {k}")
