"""Scenario files: the built-in ones (package data beside this module) and the user's, by path;
each fault checked by its kind's model (``harness.faults``)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from harness import faults, shipped
from harness.errors import UserError
from harness.spec.loader import parse_model, read_document
from harness.spec.scenario import Scenario


def builtin_dir():
    return resources.files("harness") / "scenarios"


def builtin_names() -> list[str]:
    return sorted(p.name.removesuffix(".yaml") for p in builtin_dir().iterdir() if p.name.endswith(".yaml"))


def load_scenario(name_or_path: str) -> tuple[Scenario, str]:
    """A built-in name or a file path -> (scenario, where it came from); a scenario of a family's
    own world (``world:``) is one UserError line: only ``harness run`` plays those."""
    sc, path = load_any_scenario(name_or_path)
    if not isinstance(sc, Scenario):
        raise UserError(f"a scenario of the {sc.world} world: 'harness run' plays it (it has no app to simulate "
                        "on a cluster)", source=path, field="world")
    return sc, path


def load_any_scenario(name_or_path: str):
    """A built-in name or a file path -> (scenario, where it came from): a ``Scenario`` of apps on
    the one ground's cluster, or, for a file with ``world: NAME``, that world's scenario
    (``harness.scenarios.worlds``)."""
    path = Path(name_or_path)
    if not path.exists() and name_or_path in builtin_names():
        path = Path(str(builtin_dir() / f"{name_or_path}.yaml"))
    elif not path.exists() and shipped.find(path).exists():  # a scenario file harness ships (scenarios/...)
        path = shipped.find(path)
    elif not path.exists():
        raise UserError(f"no scenario file and no built-in scenario of that name (built-in: {', '.join(builtin_names())})",
                        source=name_or_path)
    doc = read_document(path)
    if isinstance(doc, dict) and doc.get("world", "cluster") != "cluster":
        return _world_scenario(doc, path), str(path)
    if isinstance(doc, dict):
        doc.pop("world", None)  # world: cluster, said out loud
        _read_load_files(doc, path)
    sc = parse_model(Scenario, doc, str(path))
    typed = [faults.parse(f, f"faults[{i}]", str(path)) for i, f in enumerate(sc.faults)]
    return sc.model_copy(update={"faults": typed}), str(path)


def _world_scenario(doc: dict, path: Path):
    from harness.scenarios import worlds

    try:
        world = worlds.get(str(doc["world"]))
    except KeyError:
        raise UserError(f"no world {doc['world']!r} (worlds: cluster, {', '.join(worlds.names())})",
                        source=str(path), field="world") from None
    return parse_model(world.scenario_model(), doc, str(path))


def _read_load_files(doc: dict, path: Path) -> None:
    """A load's steps_file (CSV at_s,value) and trace_file (μBench workload JSON), read relative to
    the scenario file, into its steps and trace."""
    import csv

    loads = doc.get("load")
    many = isinstance(loads, list)
    for i, load in enumerate(loads if many else [loads]):
        if not isinstance(load, dict):
            continue
        where = f"load[{i}]" if many else "load"
        for key in ("steps_file", "trace_file"):
            if load.get(key) is None:
                continue
            f = Path(load[key]) if Path(load[key]).is_absolute() else path.parent / load[key]
            if key == "trace_file":
                events = read_document(f) if f.exists() else None
                if not isinstance(events, list):
                    raise UserError("expected a μBench workload file: a JSON list of {time (ms), service}",
                                    source=str(path), field=f"{where}.trace_file")
                load["trace"] = events
                continue
            try:
                rows = [r for r in csv.reader(f.read_text().splitlines()) if r and not r[0].startswith("#")]
                if rows and not rows[0][0].replace(".", "").isdigit():
                    rows = rows[1:]  # a header
                load["steps"] = [{"at_s": float(r[0]), "value": float(r[1])} for r in rows]
            except (OSError, ValueError, IndexError) as exc:
                raise UserError(f"expected a CSV of at_s,value rows ({exc})", source=str(path),
                                field=f"{where}.steps_file") from None


def app_path(ref: str, workloads: Path) -> Path:
    """A shipped workload name (workloads/<name>.json) or a path."""
    p = Path(ref)
    if p.suffix == ".json" or "/" in ref:
        return p
    return workloads / f"{ref}.json"
