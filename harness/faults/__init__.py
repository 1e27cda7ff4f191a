"""Fault kinds as plug-ins: each kind is one module of this package (or an entry point of the
``harness.faults`` group) holding its parameter model, its up-front check, its injection and
what follows it (self-healing, relearning the topology, an undo at clean-up), and declaring its
event (how the report marks it, how long failed requests after it are expected).

The live run gives each injection a :class:`FaultContext`; a kind never reaches into the run.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, ClassVar, Protocol

from pydantic import model_validator

from harness import events
from harness.errors import UserError
from harness.spec.app import App
from harness.spec.scenario import FaultParams
from harness.spec.testbed_state import NodeState
from harness.testbed.cluster import Cluster
from harness.testbed.pods import Pod

ENTRY_POINT_GROUP = "harness.faults"
KINDS: dict[str, "FaultKind"] = {}
_loaded = False


class FaultContext(Protocol):
    """What a fault kind may ask of the live run."""

    cluster: Cluster

    def heal(self, lost: list[Pod]) -> None:
        """Place these lost pods again (self-healing), once the fault's event is written."""

    def relearn_topology(self) -> None:
        """The RTTs changed: rebuild the simulator's model the rescheduler and the predictions use."""

    def on_cleanup(self, undo: Callable[[], None]) -> None:
        """Run ``undo`` when the run ends (latest first), leaving the testbed as the run found it."""

    def slow_node(self, node: str, factor: float, for_s: float) -> None:
        """A simulated run only: the node's pods take ``factor`` times their execution time for
        ``for_s`` seconds (what a kind whose live effect the simulator cannot see declares instead)."""


class FaultKind:
    """Subclass per kind: set ``name``, ``Params`` (a FaultParams with ``kind: Literal[name]``),
    ``doc``; override ``inject`` (and ``check`` for up-front validation, ``window_s`` for how long
    it disturbs requests)."""

    name: ClassVar[str]
    Params: ClassVar[type[FaultParams]]
    doc: ClassVar[str] = ""
    fields: ClassVar[tuple[str, ...]] = ()  # the detail its event carries
    marker: ClassVar[str] = "fault"
    settle_s: ClassVar[float] = 15.0  # failed requests this long after it are not steady-state errors

    def check(self, fault: FaultParams, nodes: list[NodeState], app: App) -> str | None:
        """What is wrong with this fault on this testbed and app (a message), before anything runs."""
        return None

    # what a simulated run assumes of this kind where it cannot play it as the testbed does
    # (shown by `harness scenarios` and in every simulated run's inputs)
    simulation_assumes: ClassVar[str] = ""

    def inject(self, ctx: FaultContext, fault: FaultParams) -> dict[str, Any]:
        """Do the fault; returns its event's detail."""
        raise NotImplementedError

    def simulate(self, ctx: FaultContext, fault: FaultParams) -> dict[str, Any]:
        """The fault in a simulated run (``harness evaluate SCENARIO``). By default the live
        injection itself, which acts through the Cluster interface the simulated cluster has too."""
        return self.inject(ctx, fault)

    def window_s(self, fault: FaultParams) -> float:
        return self.settle_s


def register(cls: type[FaultKind]) -> type[FaultKind]:
    """Class decorator for a fault kind: one instance in the registry, its event declared."""
    kind = cls()
    KINDS[cls.name] = kind
    events.declare(cls.name, cls.doc, cls.fields + ("late_s", "window_s"), marker=cls.marker, disturbs=True)
    return cls


def load_all() -> dict[str, FaultKind]:
    global _loaded
    if not _loaded:
        _loaded = True
        import pkgutil

        for mod in pkgutil.iter_modules(__path__):
            importlib.import_module(f"{__name__}.{mod.name}")
        from importlib.metadata import entry_points

        for ep in entry_points(group=ENTRY_POINT_GROUP):
            ep.load()  # the module registers its kind
    return KINDS


def parse(fault: FaultParams, where: str, source: str) -> FaultParams:
    """A fault checked by its kind's model (``where``: its field path, e.g. ``faults[0]``)."""
    from pydantic import ValidationError

    from harness.spec.loader import validation_error

    kinds = load_all()
    if fault.kind not in kinds:
        raise UserError(f"unknown fault kind {fault.kind!r} (kinds: {', '.join(sorted(kinds))})", source=source,
                        field=f"{where}.kind")
    try:
        return kinds[fault.kind].Params.model_validate(fault.model_dump())
    except ValidationError as exc:
        err = validation_error(exc, source)
        sub = "" if err.field == "(top level)" else f".{err.field}"
        raise UserError(err.detail, source=source, field=where + sub) from None


def check_all(faults: list[FaultParams], nodes: list[NodeState], app: App, source: str) -> None:
    """Every fault's references (nodes, node types, services) against this testbed and app, up
    front: a mistake is found before anything is deployed."""
    kinds = load_all()
    for i, f in enumerate(faults):
        problem = kinds[f.kind].check(f, nodes, app)
        if problem:
            raise UserError(problem, source=source, field=f"faults[{i}]")


def inject(ctx: FaultContext, fault: FaultParams, simulated: bool = False) -> tuple[dict[str, Any], float]:
    """(the event's detail, its disturbance window in seconds); ``simulated``: the kind's
    simulated effect."""
    kind = load_all()[fault.kind]
    detail = kind.simulate(ctx, fault) if simulated else kind.inject(ctx, fault)
    return detail, kind.window_s(fault)


# ------------------------------------------------------------------ helpers the node kinds share
class NodeTargets(FaultParams):
    """Nodes by name, or for each listed type the first node of it by name (the same node for every
    policy, so runs compare)."""

    nodes: list[str] = []
    node_types: list[str] = []

    @model_validator(mode="after")
    def _some_node(self):
        if not (self.nodes or self.node_types):
            raise ValueError(f"{self.kind} needs nodes or node_types")
        return self


def check_node_targets(fault: NodeTargets, nodes: list[NodeState]) -> str | None:
    names = {n.name for n in nodes}
    types = {n.type for n in nodes}
    for n in fault.nodes:
        if n not in names:
            return f"unknown node {n!r} (nodes: {', '.join(sorted(names))})"
    for t in fault.node_types:
        if t not in types:
            return f"no node of type {t!r} on this testbed (types: {', '.join(sorted(types))})"
    return None


def target_nodes(cluster: Cluster, fault: NodeTargets, want_up: bool) -> list[str]:
    """Named nodes, then for each listed type its first node (by name) that is up (``want_up``) or
    down, else its first node."""
    out = list(fault.nodes)
    for t in fault.node_types:
        of_type = sorted(n.name for n in cluster.nodes if n.type == t)
        fit = [n for n in of_type if cluster.node_up(n) == want_up and n not in out]
        out.append((fit or of_type)[0])
    return out
