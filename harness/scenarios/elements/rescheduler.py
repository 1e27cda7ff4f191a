"""The policy's rescheduling rounds: from ``start_s`` on, every ``period_s``, one round of the one
move loop (``harness.rescheduler.loop``) on the run's cluster; none while self-healing is under
way (rescheduling comes after it, as in REACH §VII-D)."""

from __future__ import annotations

from harness.rescheduler.live import reschedule
from harness.rescheduler.loop import CycleGuard

SIMULATION_ASSUMES = ("a move takes no time: the new pod serves at once and the old one stops; a plan takes no "
                      "virtual time (each call of the policy's still within rescheduler.plan_budget_s of wall "
                      "clock, past which it is a plan-timeout)")
SIMULATION_ASSUMES_LIFECYCLE = ("a move waits for its new pod's start time (the profile's pod lifecycle) while the "
                                "old pod serves, then the old one stops and holds its room for its stop time; an "
                                "element due meanwhile acts when the move is done (a fault then says late_s); a plan "
                                "takes no virtual time (each call of the policy's still within "
                                "rescheduler.plan_budget_s of wall clock, past which it is a plan-timeout)")


def wanted(sc) -> bool:
    return sc.rescheduler.max_moves > 0  # max_moves 0: a static placement, the policy is never asked to plan


def driver(run):
    rs = run.plan.scenario.rescheduler
    guard = CycleGuard()
    think = run.budget  # in every world: virtual time does not wait for a plan, the wall clock does
    yield rs.start_s
    while True:
        if run.healing:
            yield 0.5
            continue
        r = reschedule(run.plan.policy, run.view, run.lock, rs.max_moves, run.event, run.lineage,
                       lambda: run.stop.is_set() or bool(run.healing), guard, think, clock=run.now)
        if r.moves:
            run.add_moves(r.moves)
        if r.ended == "policy-error" and rs.on_policy_error == "idle":
            return  # the user chose: a policy that raised is not asked again in this run
        yield rs.period_s
