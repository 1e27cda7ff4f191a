"""A replica schedule (KubeDSM's workloads): cycle k's counts at k x ``cycle_s``, bypassing the
autoscaler, so every policy meets the same demand at the same time (``late_s``: how late). With
``hpa``, the counts are what the HPA is asked for, reaching the cluster at its default pace
(``harness.autoscaler``: a change every sync, up at most +4 pods or +100 %, down only to the
highest count of the stabilisation window); the first cycle's counts are the deployment's own."""

from __future__ import annotations

from harness.autoscaler import scale_up_limit, stabilised

SIMULATION_ASSUMES = ("new pods start at once; a pod scaled down holds its room for the simulated cluster's "
                      "terminating_s (live: a grace of 0.3 s, then its drain)")
SIMULATION_ASSUMES_LIFECYCLE = ("new pods serve after their start time and a pod scaled down holds its room for its "
                                "stop time, both drawn from the profile's pod lifecycle (terminating_s, when given, "
                                "for the stop); the schedule waits for its new pods, as live")


def wanted(sc) -> bool:
    return sc.replica_schedule is not None


def driver(run):
    sched = run.plan.scenario.replica_schedule
    yield from (paced(run, sched) if sched.hpa else on_time(run, sched))


def on_time(run, sched):
    for k, cycle in enumerate(sched.cycles):
        due = k * sched.cycle_s
        if k and due > run.t_run():
            yield due - run.t_run()
        run.event("replica-cycle", cycle=k, replicas=cycle, late_s=round(run.t_run() - due, 3))
        run.scale_to({s: (lambda mine, n=n: (n, {"reason": "schedule"})) for s, n in cycle.items()})
        run.record_placement(f"cycle {k}")


def paced(run, sched):
    """Every sync: each service's count moved toward its cycle's as the HPA moves it. The count is
    the deployment's (``spec.replicas``), kept here: pods the placer could not place do not lower it."""
    pace, history, counts = sched.hpa, {}, {}
    end, cycle_k = len(sched.cycles) * sched.cycle_s, -1
    while True:
        t = run.t_run()
        k = min(len(sched.cycles) - 1, int(t // sched.cycle_s))
        if k != cycle_k:
            cycle_k = k
            run.event("replica-cycle", cycle=k, replicas=sched.cycles[k], late_s=round(t - k * sched.cycle_s, 3))
        targets = {}
        for s, asked in sched.cycles[k].items():
            n = counts.get(s, asked)  # the first sync: the deployment's own count
            want = stabilised(history.setdefault(s, []), t, asked, n, pace.scale_down_stabilization_s)
            counts[s] = want = min(want, scale_up_limit(n))
            targets[s] = lambda mine, n=want: (n, {"reason": "schedule"})
        if run.scale_to(targets):
            run.record_placement(f"sync {k}")
        if t + pace.sync_s >= end:
            return
        yield pace.sync_s
