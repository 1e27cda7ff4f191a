"""The policy's rescheduling rounds: from ``start_s`` on, every ``period_s``, one round of the one
move loop (``harness.rescheduler.loop``) on the run's cluster; none while self-healing is under
way (rescheduling comes after it, as in REACH §VII-D)."""

from __future__ import annotations

from harness.rescheduler.live import reschedule
from harness.rescheduler.loop import CycleGuard

SIMULATION_ASSUMES = "a move takes no time: the new pod serves at once and the old one stops"


def wanted(sc) -> bool:
    return True


def driver(run):
    rs = run.plan.scenario.rescheduler
    guard = CycleGuard()
    yield rs.start_s
    while True:
        if run.healing:
            yield 0.5
            continue
        n = reschedule(run.plan.policy, run.view, run.lock, rs.max_moves, run.event, run.lineage,
                       lambda: run.stop.is_set() or bool(run.healing), guard).moves
        if n:
            run.add_moves(n)
        yield rs.period_s
