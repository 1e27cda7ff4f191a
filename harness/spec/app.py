"""Applications: a μBench workmodel, bare or wrapped as ``{"name", "gateway", "services"}``.

Each service runs one internal job (``compute_pi``, ``loader`` or ``colosseum``, typed in
:mod:`harness.spec.jobs` with μBench's defaults) and then its ``external_services`` groups:
groups run in parallel, inside a group ``seq_len`` services (picked at random when fewer than
the group has, as μBench does) run in sequence, each called with its probability (default 1).
These are REACH's service groups (eqs. 6-7). Keys harness does not honour (``sidecar``,
``workers``, ``cpu-limits``, a ``request_method`` other than rest...) are kept, and each gets one
warning line (:attr:`App.warnings`) from ``validate``, ``deploy`` and ``run``.
"""

from __future__ import annotations

import difflib

import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from harness.errors import UserError
from harness.spec.jobs import JOB_MODELS, unknown_keys
from harness.spec.loader import field_path, read_document, validation_error
from harness.spec.names import JoinedName, as_name

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
JOBS = tuple(JOB_MODELS)
DEFAULT_COST_WEIGHT = 0.01  # paper 003's Table 4: eq. 1's weight of cost against delay

# μBench workmodel keys of a service that harness keeps but does not act on, and why; a key whose
# value means what harness does anyway (request_method rest, path /api/v1) is not reported
IGNORED_SERVICE_KEYS = {
    "request_method": "cells speak HTTP (μBench's rest); gRPC is not emulated",
    "path": "cells serve /api/v1 only",
    "sidecar": "no sidecar containers",
    "workers": "a cell is one process; its job threads are the cell's --workers",
    "threads": "a cell is one process; its job threads are the cell's --workers",
    "cpu-limits": "CPU is capped per node (its cgroup), not per pod",
    "memory-limits": "memory is capped per node (its cgroup), not per pod",
    "alternative_behaviors": "no alternative behaviours: every request runs the one internal_service",
}
_HONOURED_AS_IS = {"request_method": "rest", "path": "/api/v1"}
# written by μBench's own deployer (K8sYamlBuilder) from its K8sParameters, overwriting the
# workmodel's: harness's deployer owns them the same way, so they are not reported
_DEPLOYER_OWNED = {"url", "image", "namespace"}


class ExternalGroup(BaseModel):
    model_config = ConfigDict(extra="allow")
    seq_len: int = Field(ge=1)
    services: list[str]
    probabilities: dict[str, float] = {}
    # paper 003's delay cap λ per call: the most one-way delay (half the RTT, ms) allowed between
    # the caller's node and this callee's (harness.families.rollout.cost_delay)
    max_delay_ms: dict[str, float] | None = None

    @field_validator("max_delay_ms")
    @classmethod
    def _positive(cls, v: dict[str, float] | None) -> dict[str, float] | None:
        for name, ms in (v or {}).items():
            if not ms > 0:
                raise ValueError(f"max_delay_ms of {name!r} is {ms}; must be > 0")
        return v

    @field_validator("probabilities")
    @classmethod
    def _in_unit_interval(cls, v: dict[str, float]) -> dict[str, float]:
        for name, p in v.items():
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"probability of {name!r} is {p}; must be within [0, 1]")
        return v

    def calls(self) -> int:
        """How many services one execution of the group calls (before probabilities)."""
        return min(self.seq_len, len(self.services))


class ServiceSpec(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)
    external_services: list[ExternalGroup] = []
    internal_service: dict[str, dict[str, Any]]
    replicas: int = Field(1, ge=1)
    cpu_requests: str | float | None = Field(None, alias="cpu-requests")
    memory_requests: str | float | None = Field(None, alias="memory-requests")
    # μBench's placement constraints (its K8sYamlBuilder makes them required node affinity by
    # hostname and required pod anti-affinity by hostname): the nodes the service's pods may run
    # on, and whether its replicas must sit on distinct nodes
    node_affinity: list[str] | None = Field(None, min_length=1)
    pod_antiaffinity: bool = False
    # paper 003's data size s of a microservice: what its node's data_cost is charged per unit of
    data_size: float | None = Field(None, ge=0)

    @field_validator("internal_service")
    @classmethod
    def _one_known_job(cls, v: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        if len(v) != 1:
            raise ValueError(f"must have exactly one job, got {len(v)}")
        (name, params), = v.items()
        if name not in JOBS:
            raise ValueError(f"unsupported job {name!r}; supported: {', '.join(JOBS)}")
        if not isinstance(params, dict):
            raise ValueError(f"parameters of {name} must be an object")
        return v

    @property
    def job(self) -> str:
        return next(iter(self.internal_service))

    @property
    def job_params(self) -> BaseModel:
        """The job's parameters over μBench's defaults (typed; checked by :func:`check_app`)."""
        return JOB_MODELS[self.job].model_validate(next(iter(self.internal_service.values())))

    def ignored_keys(self) -> list[str]:
        return [k for k in (self.model_extra or {}) if k in IGNORED_SERVICE_KEYS
                and self.model_extra[k] != _HONOURED_AS_IS.get(k)] + \
               [k for k in (self.model_extra or {}) if k not in IGNORED_SERVICE_KEYS and k not in _DEPLOYER_OWNED]


def cpu_cores(value: str | float | None, default: float = 0.1) -> float:
    """Kubernetes CPU quantity ('500m', '1', 0.5) in cores."""
    if value is None:
        return default
    s = str(value).strip()
    try:
        return float(s[:-1]) / 1000 if s.endswith("m") else float(s)
    except ValueError:
        raise ValueError(f"{value!r} is not a CPU quantity like '500m' or '1'") from None


_MEM = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "K": 1e3, "M": 1e6, "G": 1e9, "k": 1e3}


def memory_mib(value: str | float | None, default: float = 128) -> float:
    """Kubernetes memory quantity ('512Mi', '1G', bytes) in MiB."""
    if value is None:
        return default
    s = str(value).strip()
    for suffix in sorted(_MEM, key=len, reverse=True):
        if s.endswith(suffix):
            try:
                return float(s[: -len(suffix)]) * _MEM[suffix] / 2**20
            except ValueError:
                break
    try:
        return float(s) / 2**20
    except ValueError:
        raise ValueError(f"{value!r} is not a memory quantity like '512Mi'") from None


class App(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: JoinedName  # a file name and a label value (harness.spec.names)
    gateway: str
    services: dict[str, ServiceSpec]
    # the services users call (several apps deployed together, or one app with several entry
    # services); default: the gateway alone
    entries: list[str] | None = None
    # paper 003's placement problem (harness.families.rollout.cost_delay): the node each entry's data come
    # from (π_a), and how the apps weigh cost against delay (eq. 1's w)
    sources: dict[str, str] | None = None
    cost_weight: float | None = Field(None, ge=0, le=1, description=f"default {DEFAULT_COST_WEIGHT}, paper 003's Table 4")
    # what validation found that μBench would accept but harness does not act on, one line each
    _warnings: list[str] = PrivateAttr(default_factory=list)

    @property
    def warnings(self) -> list[str]:
        return list(self._warnings)

    def weight(self) -> float:
        """Eq. 1's weight of cost against delay: ``cost_weight``, or paper 003's default."""
        return DEFAULT_COST_WEIGHT if self.cost_weight is None else self.cost_weight

    def entry_services(self) -> list[str]:
        return list(self.entries or [self.gateway])

    def resolve_entry(self, name: str | None) -> str | None:
        """A load's entry: a service, or (apps deployed together) an app's name for its gateway;
        no name: the gateway; an unknown name: None."""
        if name is None:
            return self.gateway
        if name in self.services:
            return name
        return next((e for e in self.entry_services() if e.startswith(f"{name}-")), None)

    def callees(self, service: str) -> list[str]:
        return [c for g in self.services[service].external_services for c in g.services]

    def edges(self) -> list[tuple[str, str]]:
        return [(s, c) for s in self.services for c in dict.fromkeys(self.callees(s))]

    def cpu_request(self, service: str) -> float:
        return cpu_cores(self.services[service].cpu_requests)

    def memory_request(self, service: str) -> float:
        return memory_mib(self.services[service].memory_requests)

    def total_pods(self) -> int:
        return sum(s.replicas for s in self.services.values())

    # the placement constraints: the one definition policies, the simulator and checks use
    def may_run_on(self, service: str, node: str) -> bool:
        """node_affinity: the service's pods run only on the listed nodes (any node when unset)."""
        allowed = self.services[service].node_affinity
        return allowed is None or node in allowed

    def spreads(self, service: str) -> bool:
        """pod_antiaffinity: no two pods of the service on one node."""
        return self.services[service].pod_antiaffinity

    def constraint_problem(self, placement: dict[str, list[str]]) -> tuple[str, str] | None:
        """(field, what is wrong) for the first placement entry that breaks a constraint."""
        for service, nodes in placement.items():
            for i, node in enumerate(nodes):
                if not self.may_run_on(service, node):
                    return (f"{service}[{i}]", f"{node} is not in {service}'s node_affinity "
                            f"({', '.join(self.services[service].node_affinity)})")
            if self.spreads(service) and len(set(nodes)) < len(nodes):
                return service, f"{service} has pod_antiaffinity: its replicas need distinct nodes"
        return None

    def check_nodes(self, nodes: list[str], source: str) -> None:
        """Constraints against a testbed's placement nodes: affinity to a node it lacks, or more
        replicas that must spread than nodes they may use, is a user error."""
        for name, svc in self.services.items():
            for i, node in enumerate(svc.node_affinity or []):
                if node not in nodes:
                    raise UserError(f"unknown node {node!r} (nodes: {', '.join(nodes)})", source=source,
                                    field=f"{name}.node_affinity[{i}]")
            usable = [n for n in nodes if self.may_run_on(name, n)]
            if (src := (self.sources or {}).get(name)) is not None and src not in nodes:
                raise UserError(f"unknown node {src!r} (nodes: {', '.join(nodes)})", source=source,
                                field=f"sources.{name}")
            if svc.pod_antiaffinity and svc.replicas > len(usable):
                raise UserError(f"{svc.replicas} replicas with pod_antiaffinity need {svc.replicas} nodes; only "
                                f"{len(usable)} may run {name}", source=source, field=f"{name}.pod_antiaffinity")


# ------------------------------------------------------------------ validation
def _check_job(svc: ServiceSpec, where: str, source: str) -> list[str]:
    """Type-check the job's parameters (one UserError naming the field); the unknown keys."""
    base = f"{where}.internal_service.{svc.job}"
    try:
        params = svc.job_params
    except ValidationError as exc:
        err = exc.errors()[0]
        raise UserError(validation_error(exc, source).detail, source=source,
                        field=f"{base}.{field_path(tuple(err['loc']))}" if err["loc"] else base) from None
    return [f"{base}.{k}" for k in unknown_keys(params)]


def _ignored_lines(app: App, prefix: str, unknown_params: list[str]) -> list[str]:
    """One line per ignored key, naming the services that carry it."""
    by_key: dict[str, list[str]] = {}
    for name, svc in app.services.items():
        for k in svc.ignored_keys():
            by_key.setdefault(k, []).append(name)
    lines = []
    for key, names in by_key.items():
        shown = ", ".join(f"{prefix}{n}" for n in names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        why = IGNORED_SERVICE_KEYS.get(key, "not a key harness knows")
        values = {repr(app.services[n].model_extra[key]) for n in names}
        value = f" = {values.pop()}" if len(values) == 1 and key in _HONOURED_AS_IS else ""
        lines.append(f"{key}{value} ignored ({shown}): {why}")
    lines += [f"{p} ignored: the job does not read it" for p in unknown_params]
    return lines


def _find_cycle(app: App) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(s: str) -> list[str] | None:
        state[s] = 1
        stack.append(s)
        for c in dict.fromkeys(app.callees(s)):
            if state.get(c) == 1:
                return stack[stack.index(c):] + [c]
            if c not in state and (cyc := visit(c)):
                return cyc
        stack.pop()
        state[s] = 2
        return None

    for s in app.services:
        if s not in state and (cyc := visit(s)):
            return cyc
    return None


def check_app(app: App, source: str, prefix: str) -> App:
    """What the schema cannot say, every problem found (one UserError, the rest in ``more``): names,
    calls to services that exist, requests, the gateway, entries and sources, no call cycle."""
    unknown_params: list[str] = []
    notes: list[str] = []
    problems: list[tuple[str, str]] = []  # (field, what is wrong)
    for name, svc in app.services.items():
        where = f"{prefix}{name}"
        if not DNS_LABEL.match(name) or len(name) > 40:
            problems.append((where, f"service name {name!r} must be a DNS-1123 label (lower-case letters, digits, '-')"))
        for gi, group in enumerate(svc.external_services):
            for si, callee in enumerate(group.services):
                if callee not in app.services:
                    near = difflib.get_close_matches(callee, list(app.services), n=1)
                    problems.append((f"{where}.external_services[{gi}].services[{si}]", f"unknown service {callee!r}"
                                     + (f" (did you mean {near[0]!r}?)" if near else "")))
            for callee in group.max_delay_ms or {}:
                if callee not in group.services:
                    problems.append((f"{where}.external_services[{gi}].max_delay_ms.{callee}",
                                     f"{callee!r} is not in this group's services ({', '.join(group.services)})"))
            for callee in group.probabilities:
                if callee not in group.services:  # μBench reads only the probabilities of services it picks
                    notes.append(f"{where}.external_services[{gi}].probabilities.{callee} ignored: "
                                 f"{callee!r} is not in this group's services")
            for key in group.model_extra or {}:  # μBench ignores what it does not know, typos too: say so
                near = difflib.get_close_matches(key, list(ExternalGroup.model_fields), n=1, cutoff=0.75)
                notes.append(f"{where}.external_services[{gi}].{key} ignored: not a key of a call group"
                             + (f" (did you mean {near[0]!r}?)" if near else ""))
        try:
            unknown_params += _check_job(svc, where, source)
        except UserError as exc:
            problems.append((exc.field or where, exc.detail))
        for key, raw, parse in (("cpu-requests", svc.cpu_requests, cpu_cores),
                                ("memory-requests", svc.memory_requests, memory_mib)):
            try:
                if raw is not None and parse(raw) <= 0:
                    raise ValueError(f"must be > 0, got {raw!r}")
            except ValueError as exc:
                problems.append((f"{where}.{key}", str(exc)))
    if app.gateway not in app.services:
        problems.append(("gateway", f"gateway {app.gateway!r} is not a service of the app"))
    for i, e in enumerate(app.entries or []):
        if e not in app.services:
            problems.append((f"entries[{i}]", f"entry {e!r} is not a service of the app"))
    for e in app.sources or {}:
        if e not in app.entry_services():
            problems.append((f"sources.{e}", f"{e!r} is not an entry of the app (entries: {', '.join(app.entry_services())})"))
    if not any("unknown service" in text for _, text in problems):  # a cycle needs every callee to exist
        cycle = _find_cycle(app)
        if cycle:
            problems.append(("services", f"the call graph has a cycle: {' -> '.join(cycle)}"))
    if problems:
        (field, text), rest = problems[0], problems[1:]
        raise UserError(text, source=source, field=field, more=[f"{source}: {f}: {t}" for f, t in rest])
    app._warnings = notes + _ignored_lines(app, prefix, unknown_params)
    return app


def _is_wrapped(doc: dict) -> bool:
    inner = doc.get("services")
    return isinstance(inner, dict) and "internal_service" not in inner and "external_services" not in inner


def _roots(services: dict[str, Any]) -> list[str]:
    called = {c for s in services.values() if isinstance(s, dict)
              for g in s.get("external_services") or [] if isinstance(g, dict) for c in g.get("services") or []}
    return [s for s in services if s not in called]


# top-level keys of μBench's tool configuration files (Configs/*.json), to say what a wrong file is
MUBENCH_CONFIGS = {"WorkModelParameters": "WorkModelGenerator", "ServiceGraphParameters": "ServiceGraphGenerator",
                   "K8sParameters": "K8sDeployer", "RunnerParameters": "Runner", "TrafficParameters": "TrafficGenerator",
                   "RunWorkModelGeneratorFilePath": "K8sAutopilot"}


def _what_else(doc: dict) -> str | None:
    """A μBench file that is not a workmodel: what it is and what to do instead."""
    for key, tool in MUBENCH_CONFIGS.items():
        if key in doc:
            return (f"this is a μBench {tool} configuration file, not a workmodel; give the workmodel "
                    f"(the JSON μBench's WorkModelGenerator writes, e.g. SimulationWorkspace/workmodel.json)")
    services = doc.get("services") if _is_wrapped(doc) else doc
    if (isinstance(services, dict) and services and all(isinstance(v, dict) for v in services.values())
            and all("external_services" in v and "internal_service" not in v for v in services.values())):
        return ("this is a μBench service graph (external_services only, as ServiceGraphGenerator writes it); "
                "turn it into a workmodel with μBench's WorkModelGenerator, or give every service an internal_service")
    return None


def parse_app(doc: Any, source: str, default_name: str = "app") -> App:
    if not isinstance(doc, dict) or not doc:
        raise UserError("expected a JSON object of services (μBench workmodel) or {name, gateway, services}", source=source)
    if (other := _what_else(doc)) is not None:
        raise UserError(other, source=source)
    if _is_wrapped(doc):
        wrapped, prefix = dict(doc), "services."
        wrapped.setdefault("name", default_name)
        if "gateway" not in wrapped:
            roots = _roots(doc["services"])
            if len(roots) != 1:
                raise UserError(f"no gateway given and {len(roots)} services are called by none "
                                f"({', '.join(roots) or 'none'}); set 'gateway'", source=source, field="gateway")
            wrapped["gateway"] = roots[0]
    else:
        roots = _roots(doc)
        if len(roots) != 1:
            raise UserError(f"cannot tell the gateway: {len(roots)} services are called by none "
                            f"({', '.join(roots) or 'none'}); wrap as {{\"gateway\": ..., \"services\": ...}}",
                            source=source, field="(top level)")
        wrapped, prefix = {"name": default_name, "gateway": roots[0], "services": doc}, ""
    try:
        app = App.model_validate(wrapped)
    except ValidationError as exc:
        err = validation_error(exc, source, App)
        if prefix == "" and err.field and err.field.startswith("services."):
            err = UserError(err.detail, source=source, field=err.field[len("services."):],
                            more=[m.replace(f"{source}: services.", f"{source}: ", 1) for m in err.more])
        raise err from None
    return check_app(app, source, prefix)


def load_app(path: str | Path) -> App:
    from harness import shipped

    path = shipped.find(path)  # workloads/chain.json: the shipped app, from any folder
    name = as_name(path.name.split(".")[0])
    return parse_app(read_document(path), str(path), default_name=name)


def app_to_json(app: App) -> str:
    return json.dumps(app.model_dump(mode="json", by_alias=True, exclude_none=True), indent=2)


def compose(apps: list[App]) -> App:
    """Several apps deployed together as one: each service renamed ``<app>-<service>`` (calls
    renamed alike), every app's gateway an entry, the first one's the gateway."""
    if len(apps) == 1:
        return apps[0]
    names = [a.name for a in apps]
    if len(set(names)) != len(names):
        raise UserError(f"the same app twice ({', '.join(names)}): give each app once", field="app")
    services: dict[str, ServiceSpec] = {}
    for a in apps:
        ren = {s: f"{a.name}-{s}" for s in a.services}
        for s, spec in a.services.items():
            groups = [g.model_copy(update={"services": [ren[c] for c in g.services],
                                           "probabilities": {ren[c]: p for c, p in g.probabilities.items()},
                                           "max_delay_ms": None if g.max_delay_ms is None else
                                           {ren[c]: ms for c, ms in g.max_delay_ms.items()}})
                      for g in spec.external_services]
            services[ren[s]] = spec.model_copy(update={"external_services": groups})
    weights = {a.weight() for a in apps}
    if len(weights) > 1:
        raise UserError(f"apps deployed together weigh cost differently ({', '.join(map(str, sorted(weights)))}): "
                        "give them one cost_weight", field="app")
    sources = {f"{a.name}-{e}": node for a in apps for e, node in (a.sources or {}).items()} or None
    app = App(name="+".join(names), gateway=f"{apps[0].name}-{apps[0].gateway}", services=services,
              entries=[f"{a.name}-{a.gateway}" for a in apps], sources=sources, cost_weight=apps[0].cost_weight)
    return check_app(app, "+".join(names), "services.")  # warnings found again, with the composed names
