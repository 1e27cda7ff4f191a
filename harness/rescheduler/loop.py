"""The one move loop: ``harness sweep``, ``harness evaluate`` and the live rescheduler all call ``run_round``.

A round asks the policy for a plan, applies its moves one at a time (the first move of the plan
that is valid now, so a plan may order itself loosely), asks again when the plan is used up, and
ends when the policy is idle (an empty plan), at the cap, when ``should_stop()`` says so, when
no move left in the plan is valid, when a move would bring back a placement already held since
the round started (the cycle guard), when a move fails, or when the policy fails: a policy is
user code, so its plan is made on a snapshot outside the world's turn (self-healing and scaling
never wait for it), within a wall-clock budget in every world (``Budget``: a run's one per policy,
which its place() calls share), and an exception
in it ends the round with a ``policy-error`` event, not the rescheduler. The world says how a move is made:
make-before-break on a live cluster, a write to the state in the simulator.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from dataclasses import dataclass
from typing import Callable, ContextManager, Protocol

from harness.policies.contract import Ability, CannotPlan, ClusterView, Move, Policy, checked_plan

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
    ended: str  # idle | cap | stopped | skipped | no-valid-move | cycle | failed | policy-error | plan-timeout


class PlanTimeout(Exception):
    """The policy did not answer within its budget."""


class Budget:
    """A policy's decision run in a thread of its own for at most ``seconds``: past that the round
    goes on without it (``PlanTimeout``), and until that decision has ended no other is asked of
    the policy (a policy need not be re-entrant). Python cannot stop the thread; it ends when the
    policy returns, its answer dropped."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.busy: threading.Thread | None = None

    _of: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()

    @classmethod
    def of(cls, policy: object, seconds: float) -> "Budget":
        """The one budget of ``policy`` (a run's place() and plan(), and the next run's with the same
        policy object: a decision still running in a thread blocks the next, whichever run asks)."""
        try:
            budget = cls._of.setdefault(policy, cls(seconds))
        except TypeError:  # not weakly referable or not hashable: a budget of this run's own
            return cls(seconds)
        budget.seconds = seconds
        return budget

    def __call__(self, fn: Callable[[], list]) -> list:
        if self.busy is not None and self.busy.is_alive():
            raise PlanTimeout("still deciding since an earlier round")
        box: dict = {}

        def work() -> None:
            try:
                box["value"] = fn()
            except BaseException as exc:  # handed to the caller's thread
                box["error"] = exc
        thread = threading.Thread(target=work, daemon=True, name="policy-plan")
        thread.start()
        thread.join(self.seconds)
        if thread.is_alive():
            self.busy = thread
            raise PlanTimeout(f"no answer within {self.seconds:g} s")
        if "error" in box:
            raise box["error"]
        return box["value"]


def _at_once(fn: Callable[[], list]) -> list:
    return fn()


def _ignore(kind: str, **detail) -> None:
    pass


def run_round(policy: Policy, world: World, max_moves: int, guard: CycleGuard | None = None,
              on_event: Event = _ignore, should_stop: Callable[[], bool] = lambda: False,
              think: Callable[[Callable[[], list]], list] = _at_once) -> Round:
    """``think``: how the policy's ``plan`` is called (at once, or within a ``Budget``)."""
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
        if not pending:
            with world.turn():
                snapshot = world.view()
            try:
                pending = checked_plan(think(lambda: policy.plan(snapshot)), snapshot)  # outside the turn
            except CannotPlan as exc:
                on_event("reschedule-skipped", reason=str(exc))
                return Round(moves, "skipped")
            except PlanTimeout as exc:
                on_event("plan-timeout", reason=str(exc))
                return Round(moves, "plan-timeout")
            except Exception as exc:
                on_event("policy-error", where="plan", error=f"{type(exc).__name__}: {exc}"[:300])
                return Round(moves, "policy-error")
            if not pending:
                return Round(moves, "idle")
        with world.turn():
            view = world.view()  # the plan was made on a snapshot: each move is judged on the world now
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
