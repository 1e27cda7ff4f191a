"""A change of the offered load (a new rate or number of users) starts a new placement interval:
the queueing model's prediction changes with it."""

from __future__ import annotations

SIMULATION_ASSUMES = ""


def changes(sc) -> list[tuple[float, str]]:
    """(when, why) the known load changes: a step of a rate or of closed-loop users after 0."""
    from harness.scenarios.run import closed_users, open_rate

    times = sorted({s.at_s for load in sc.loads() for s in load.steps if s.at_s > 0})
    out, rate, users = [], open_rate(sc, 0.0), closed_users(sc, 0.0)
    for t in times:
        if rate is not None and open_rate(sc, t) != rate:
            rate = open_rate(sc, t)
            out.append((t, "rate"))
        elif users is not None and closed_users(sc, t) != users:
            users = closed_users(sc, t)
            out.append((t, "users"))
    return out


def wanted(sc) -> bool:
    return bool(changes(sc))


def driver(run):
    for t, why in changes(run.plan.scenario):
        wait = t - run.t_run()
        if wait > 0:
            yield wait
        run.record_placement(why)
