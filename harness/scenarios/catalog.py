"""Scenario files: the built-in ones (package data beside this module) and the user's, by path;
each fault checked by its kind's model (``harness.faults``)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from harness import faults
from harness.errors import UserError
from harness.spec.loader import parse_model, read_document
from harness.spec.scenario import Scenario


def builtin_dir():
    return resources.files("harness") / "scenarios"


def builtin_names() -> list[str]:
    return sorted(p.name.removesuffix(".yaml") for p in builtin_dir().iterdir() if p.name.endswith(".yaml"))


def load_scenario(name_or_path: str) -> tuple[Scenario, str]:
    """A built-in name or a file path -> (scenario, where it came from)."""
    path = Path(name_or_path)
    if not path.exists() and name_or_path in builtin_names():
        path = Path(str(builtin_dir() / f"{name_or_path}.yaml"))
    elif not path.exists():
        raise UserError(f"no scenario file and no built-in scenario of that name (built-in: {', '.join(builtin_names())})",
                        source=name_or_path)
    sc = parse_model(Scenario, read_document(path), str(path))
    typed = [faults.parse(f, f"faults[{i}]", str(path)) for i, f in enumerate(sc.faults)]
    return sc.model_copy(update={"faults": typed}), str(path)


def app_path(scenario: Scenario, workloads: Path) -> Path:
    p = Path(scenario.app)
    if p.suffix == ".json" or "/" in scenario.app:
        return p
    return workloads / f"{scenario.app}.json"
