"""Write a generated document as the ordinary file it is, read back through its format's checks:
a generator's mistake is found here, not by the command that reads the file later."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from harness.spec.kinds import kind_of


def save(doc: dict, path: str | Path) -> Path:
    """``doc`` to ``path`` (JSON for .json, else YAML), then checked as its kind (``kinds``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".json":
        path.write_text(json.dumps(doc, indent=1) + "\n")
    else:
        path.write_text(yaml.dump(doc, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), sort_keys=False))
    check(path)
    return path


def check(path: Path) -> str:
    """The file read as its kind; a problem is the UserError its loader raises. The kind."""
    from harness.spec.loader import read_document

    kind = kind_of(read_document(path))
    if kind == "inventory":
        from harness.spec.inventory import load_inventory

        load_inventory(path)
    elif kind == "profile":
        from harness.spec.profile import load_profile

        load_profile(path)
    elif kind == "scenario":
        from harness.spec.loader import load_model
        from harness.spec.scenario import Scenario

        load_model(Scenario, path)
    else:
        from harness.spec.app import load_app

        load_app(path)
    return kind
