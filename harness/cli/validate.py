"""harness validate: check an app and print its call graph."""

from __future__ import annotations

import sys

from pathlib import Path

import typer

from harness.cli.main import app


def describe_app(a) -> list[str]:
    lines = [f"app '{a.name}': {len(a.services)} services, {a.total_pods()} pods, gateway {a.gateway}"]
    for name, s in a.services.items():
        lines.append(f"  {name}: job {s.job}, {s.replicas} replica(s), requests cpu {a.cpu_request(name):g} "
                     f"cores, memory {a.memory_request(name):g} MiB")
        for gi, g in enumerate(s.external_services):
            calls = ", ".join(f"{c}" + (f" (p={g.probabilities[c]:g})" if c in g.probabilities else "") for c in g.services)
            mode = "all in sequence" if g.seq_len >= len(g.services) else f"{g.seq_len} of them at random, in sequence"
            lines.append(f"    group {gi} (parallel with the others): {calls or '(empty)'} — {mode}")
    return lines


def describe_scenario(sc) -> list[str]:
    if getattr(sc, "world", "cluster") != "cluster":  # a family's own world: its fields as they are
        fields = ", ".join(f"{k} {v}" for k, v in sc.model_dump(exclude={"name", "description", "world"}).items())
        return [f"scenario '{sc.name}' of the {sc.world} world: {fields}"]
    loads = sc.load if isinstance(sc.load, list) else [sc.load]
    lines = [f"scenario '{sc.name}': {sc.duration_s:g} s, app {sc.app}, {len(loads)} load(s), {len(sc.faults)} fault(s)"]
    for i, ld in enumerate(loads):
        lines.append(f"  load {i}: {ld.mode}" + (f", {len(ld.steps)} step(s)" if ld.mode != "trace" else ""))
    for f in sc.faults:
        lines.append(f"  fault {f.kind} at {getattr(f, 'at_s', '?')} s")
    for element in ("replica_schedule", "request_stream", "background"):
        if getattr(sc, element) is not None:
            lines.append(f"  {element.replace('_', ' ')}")
    return lines


def describe_inventory(inv) -> list[str]:
    lines = [f"inventory '{inv.name}' ({inv.backend}): {len(inv.nodes)} nodes of {len(inv.node_types)} types"]
    for n in inv.nodes:
        t = inv.node_type(n)
        lines.append(f"  {n.name}: {n.type} ({t.tier}), {t.cpus:g} cpus, {t.memory_gb:g} GB, speed {t.speed:g}")
    return lines


def describe_workload(events: list) -> list[str]:
    span = max(e.time for e in events) / 1000 if events else 0.0
    services = sorted({e.service for e in events})
    return [f"μBench Runner workload: {len(events)} requests over {span:g} s to {len(services)} service(s) "
            f"({', '.join(services[:5])}{', …' if len(services) > 5 else ''})",
            "  play it in a scenario: load: {mode: trace, trace_file: THIS_FILE, entry: SERVICE-or-APP}"]


@app.command()
def validate(file: Path = typer.Argument(..., help="A file to check: an app (μBench workmodel JSON, bare or "
                                              "{name, gateway, services}), a scenario, an inventory, a profile or a "
                                              "μBench Runner workload file, told apart by their contents."),
             json_out: bool = typer.Option(False, "--json", help="Print what was checked as JSON: {file, kind, "
                                           "ok, summary: [lines], warnings: [lines]}."),
             strict: bool = typer.Option(False, "--strict", help="Warnings are errors: what μBench would ignore (an "
                                         "unknown key, a typo like 'probabilties') fails the check, exit status 2.")) -> None:
    """Check a file against its own format: an app (its services, call graph, replicas and
    requests), a scenario, an inventory, a profile, or a μBench Runner workload file. Every
    problem is printed, one line each; exit status 2 if there is any."""
    from harness import shipped
    from harness.errors import UserError
    from harness.spec.kinds import kind_of
    from harness.spec.loader import read_document

    app_file = _named(file)
    warnings: list[str] = []
    try:
        kind = kind_of(read_document(app_file))
        summary = _check(kind, app_file, warnings)
    except UserError as exc:
        for line in [str(exc).rsplit(" (and ", 1)[0]] + exc.more:  # every problem, one line each
            print(f"harness: error: {line}", file=sys.stderr)
        raise typer.Exit(2) from None
    if strict and warnings:
        for w in warnings:
            print(f"harness: error: {w} (--strict)", file=sys.stderr)
        raise typer.Exit(2)
    if json_out:
        from harness.cli.output import print_json

        print_json({"file": str(app_file), "kind": kind, "ok": True, "summary": summary, "warnings": warnings})
        return
    for w in warnings:
        print(f"harness: warning: {w}", file=sys.stderr)
    print("\n".join(summary))


def _check(kind: str, path: Path, warnings: list[str]) -> list[str]:
    """The file read as ``kind`` (a UserError on any problem): its summary lines."""
    if kind == "scenario":
        from harness.scenarios.catalog import load_any_scenario

        return describe_scenario(load_any_scenario(str(path))[0])
    if kind == "inventory":
        from harness.spec.inventory import load_inventory

        return describe_inventory(load_inventory(path))
    if kind == "profile":
        from harness.spec.profile import load_profile

        p = load_profile(path)
        return [f"profile of app '{p.app}' on testbed '{p.testbed}' ({p.method}): {len(p.services)} services × "
                f"{len(p.node_types)} node types, {len(p.nodes)} nodes" + (", calibrated" if p.calibration else "")]
    if kind == "runner-workload":
        from harness.spec.loader import parse_model, read_document
        from harness.spec.scenario import TraceEvent

        return describe_workload([parse_model(TraceEvent, e, f"{path}[{i}]")
                                  for i, e in enumerate(read_document(path))])
    from harness.spec.app import load_app

    a = load_app(path)
    warnings.extend(f"{path}: {line}" for line in a.warnings)  # what warn_app prints
    return describe_app(a)


def _named(file) -> Path:
    """The file to check: a path as given (from where the user stands), or a name harness ships —
    a built-in scenario (node-failure), an app (chain), a profile (chain.reach-local), an
    inventory (reach-local)."""
    from harness import shipped
    from harness.errors import UserError
    from harness.scenarios.catalog import builtin_dir, builtin_names

    p = Path(file)
    if p.exists() or len(p.parts) > 1 or p.suffix in (".json", ".yaml", ".yml"):
        if not p.exists():
            raise UserError("no such file (a path is read from where you stand; what harness ships is named alone: "
                            "node-failure, chain, chain.reach-local, reach-local)", source=str(file))
        return p
    if str(file) in builtin_names():
        return Path(str(builtin_dir() / f"{file}.yaml"))
    for kind in ("app", "profile", "inventory"):
        try:
            return shipped.user_file(file, kind)
        except UserError:
            continue
    raise UserError(f"no file and nothing harness ships named {str(file)!r} (scenarios: {', '.join(builtin_names())}; "
                    "apps, profiles and inventories by their names)", source=str(file))
