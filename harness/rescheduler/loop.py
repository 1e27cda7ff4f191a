"""The one move loop: ``harness evaluate`` and the live rescheduler both call ``run_round``.

A round asks the policy for a plan, applies its moves one at a time (the first move of the plan
that is valid now, so a plan may order itself loosely), asks again when the plan is used up, and
ends when the policy is idle (an empty plan), at the cap, when ``should_stop()`` says so, when
no move left in the plan is valid, when a move would bring back a placement already held since
the round started (the cycle guard), or when a move fails. The world says how a move is made:
make-before-break on a live cluster, a write to the state in the simulator.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Callable, ContextManager, Protocol

from harness.policies.contract import Ability, CannotPlan, ClusterView, Move, Policy

Event = Callable[..., None]  # on_event(kind, **detail)


class MoveFailed(Exception):
    """The world could not make the move (the old pod keeps serving)."""


class World(Protocol):
    def view(self) -> ClusterView:
        """The cluster as it is now."""

    def apply(self, move: Move, view: ClusterView) -> dict:
        """Make the move; returns details for the move event; raises MoveFailed."""

    def turn(self) -> ContextManager:
        """Held while one move is decided and made (live: the lock self-healing and scaling take)."""


class CycleGuard:
    """Stops a policy going round in circles. A deterministic policy can propose A -> B in one
    placement and B -> A in the next, forever (seen live: 40 moves of one replica between two
    edge nodes). A move that would bring back a placement already held since the last change
    the rescheduler did not make (a failure, self-healing, scaling) is not made, and the round
    ends. One guard may serve many rounds: it starts afresh when someone else changed the pods."""

    def __init__(self):
        self.seen: set[bytes] = set()
        self.last: bytes | None = None

    def start(self, key: bytes) -> None:
        if key != self.last:  # someone else changed the pods: a new start
            self.seen = {key}
            self.last = key

    def allows(self, key_after: bytes) -> bool:
        return key_after not in self.seen

    def moved(self, key_after: bytes) -> None:
        self.last = key_after
        self.seen.add(key_after)


@dataclass
class Round:
    moves: int
    ended: str  # idle | cap | stopped | skipped | no-valid-move | cycle | failed


def _ignore(kind: str, **detail) -> None:
    pass


def run_round(policy: Policy, world: World, max_moves: int, guard: CycleGuard | None = None,
              on_event: Event = _ignore, should_stop: Callable[[], bool] = lambda: False) -> Round:
    if max_moves <= 0 or not policy.can(Ability.PLAN):
        return Round(0, "idle")
    guard = guard or CycleGuard()
    with world.turn():
        guard.start(world.view().key())
    moves, pending = 0, []
    while True:
        if moves >= max_moves:
            return Round(moves, "cap")
        if should_stop():
            return Round(moves, "stopped")
        with world.turn():
            view = world.view()
            if not pending:
                try:
                    pending = list(policy.plan(view))
                except CannotPlan as exc:
                    on_event("reschedule-skipped", reason=str(exc))
                    return Round(moves, "skipped")
                if not pending:
                    return Round(moves, "idle")
            k = next((i for i, m in enumerate(pending) if view.valid(m)), None)
            if k is None:
                on_event("move-refused", pod=pending[0].pod, target=pending[0].node,
                         reason="no move of the plan is valid now (no such pod, node down or full, or already there)")
                return Round(moves, "no-valid-move")
            move = pending.pop(k)
            pod = view.pod(move.pod)
            after = view.after(move)
            if not guard.allows(after.key()):
                on_event("cycle-stopped", pod=pod.name, service=pod.service, source=pod.node, target=move.node)
                return Round(moves, "cycle")
            try:
                detail = world.apply(move, view)
            except MoveFailed as exc:
                on_event("move-failed", pod=pod.name, service=pod.service, source=pod.node, target=move.node,
                         error=str(exc)[:200])
                return Round(moves, "failed")
            guard.moved(after.key())
            moves += 1
            before_ms, after_ms = view.latency_ms(), after.latency_ms()
            on_event("move", pod=pod.name, service=pod.service, source=pod.node, target=move.node,
                     predicted_before_ms=None if before_ms is None else round(before_ms, 2),
                     predicted_after_ms=None if after_ms is None else round(after_ms, 2), **detail)


nullturn = contextlib.nullcontext
