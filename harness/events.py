"""The catalogue of event kinds a run writes to ``events.csv`` (Locust's ``Events`` is the model):
each kind's meaning, its detail fields, how the report marks it on time axes, and whether failed
requests right after it are expected (a disturbance) rather than steady-state errors.

The live loop, the summary, the report and the rescheduler service read this catalogue instead
of lists of their own; each fault kind declares its event when its module is loaded
(``harness.faults``). A fault event's detail carries ``window_s``: how long after it failed
requests do not count as steady-state errors.
"""

from __future__ import annotations

from dataclasses import dataclass


class UndeclaredEvent(ValueError):
    """An event kind, or a field of its detail, that the catalogue does not declare: a bug in
    harness (or a plug-in), never a user's mistake."""


@dataclass(frozen=True)
class EventKind:
    name: str
    doc: str
    fields: tuple[str, ...] = ()
    marker: str | None = None  # fault | recovery | move | scale: a line on the report's time axes
    disturbs: bool = False  # a disturbance: failed requests within its window_s are not steady-state errors

    def detail(self, **fields) -> dict:
        """``fields`` as this kind's detail; raises UndeclaredEvent for a field it does not declare
        (a declared field may be left out: an event says what it knows)."""
        extra = sorted(set(fields) - set(self.fields))
        if extra:
            raise UndeclaredEvent(f"event {self.name!r} declares no field(s) {', '.join(extra)} "
                                  f"(declared: {', '.join(self.fields) or 'none'}; harness/events.py)")
        return fields


CATALOGUE: dict[str, EventKind] = {}


def declare(name: str, doc: str, fields: tuple[str, ...] = (), marker: str | None = None,
            disturbs: bool = False) -> EventKind:
    kind = EventKind(name, doc, fields, marker, disturbs)
    CATALOGUE[name] = kind
    return kind


def get(name: str) -> EventKind | None:
    return CATALOGUE.get(name)


def checked(name: str, detail: dict) -> dict:
    """The detail of an event of kind ``name``, checked against the catalogue: the one gate every
    event a run writes goes through (``results.rundir.RunDir.event``)."""
    kind = CATALOGUE.get(name)
    if kind is None:
        raise UndeclaredEvent(f"undeclared event kind {name!r}: declare it in harness/events.py "
                              "(a fault kind declares its own when registered)")
    return kind.detail(**detail)


# ---------------------------------------------------------------- the run
declare("deploy", "the app deployed, every pod ready", ("placement", "placed_by", "scenario"))
declare("load-start", "the load generator began (t_run 0); per load its mode, entry, rate or user steps, and "
        "the number of trace requests", ("loads",))
declare("loadgen-exited", "the load generator stopped before the run's end", ("code",))
declare("series-not-kept", "Prometheus did not give the run's series for prometheus.json (the run stands)", ("why",))
declare("error", "a helper thread failed; the run went on", ("where", "error"))
declare("cleanup-error", "a clean-up step failed", ("step", "error"))
HOST_SPEED = declare("host-speed", "the host's speed, sampled every metrics pull: CPU ms of a fixed job "
                     "(testbed.speed.host_reference_ms), which a replay of the run follows (sim.trace_replay)",
                     ("cpu_ms",)).name
# ---------------------------------------------------------------- pods
declare("healed", "self-healing placed a failed node's pods again", ("reason", "pods", "nodes", "lost", "seconds"))
declare("pending", "a pod no node has room for stays pending (rejected)", ("service", "reason", "detail"))
declare("start-failed", "a new pod did not get ready and was removed", ("pod", "service", "node", "error"))
declare("pod-crashed", "a pod's process died; it is replaced on its node", ("pod", "service", "node"))
declare("restarted", "a crashed pod replaced on its node", ("pod", "service", "node", "seconds"))
declare("scale", "the autoscaler (or a replica schedule) changed a service's replica count",
        ("service", "to", "current", "utilisation", "reason"), marker="scale")
declare("background", "other tenants' share of each node, held for the run", ("cores", "memory_mib"))
declare("replica-cycle", "a replica schedule's cycle began", ("cycle", "replicas", "late_s"), marker="scale")
declare("request-arrival", "a deployment request was admitted when it was due (due_s, on the run's clock): its R "
        "pods placed and starting", ("request", "service", "replicas", "nodes", "lifetime_s", "due_s"))
declare("request-rejected", "a deployment request found no room for all its pods: none started",
        ("request", "service", "replicas"))
declare("request-departure", "a deployment request's lifetime ended: its pods stopped", ("request", "pods"))
declare("autoscaler-error", "the autoscaler could not read CPU from Prometheus", ("error",))
# ---------------------------------------------------------------- the move loop (rescheduler/loop.py)
declare("move", "a pod moved make-before-break", ("pod", "new_pod", "service", "source", "target",
                                                  "predicted_before_ms", "predicted_after_ms", "seconds"),
        marker="move")
declare("cycle-stopped", "a move would bring back a placement already held; the round ended",
        ("pod", "service", "source", "target"))
declare("move-failed", "the new pod never got ready; the old one kept serving", ("pod", "service", "source", "target",
                                                                                "error"))
declare("move-refused", "no move of the policy's plan was valid", ("pod", "target", "reason"))
declare("interrupted", "the run was stopped by Ctrl-C, SIGTERM or SIGHUP (its summary is partial)", ("by", "t_run"))
declare("policy-error", "the policy raised an exception (the round ends; new pods it was placing stay pending)",
        ("where", "error"))
declare("plan-timeout", "the policy did not plan within rescheduler.plan_budget_s (the round ends)", ("reason",))
declare("reschedule-skipped", "the policy cannot plan for this cluster", ("reason",))
# ---------------------------------------------------------------- the rescheduler service (harness reschedule)
declare("start", "the service started", ("policy", "namespace", "period_s"))
declare("bound", "pods nobody bound were placed", ("pods", "nodes"))
declare("stop", "the service stopped", ("rounds", "bound", "moves"))


def markers() -> dict[str, str]:
    """Event kind -> marker category, for the kinds the report draws."""
    return {k.name: k.marker for k in CATALOGUE.values() if k.marker}


def disturbances() -> set[str]:
    return {k.name for k in CATALOGUE.values() if k.disturbs}
