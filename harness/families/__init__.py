"""The seed papers' own parts, one package per family: each paper's world where it has one, its
learners, its baselines and its live pieces, with a README.md of its own. The shared core (spec, the ground's
simulator, the move loop, scenarios, testbeds, results) never imports a family: it finds what
the families add through its registries (``harness.policies``, ``harness.policies.world_learners``,
``harness.scenarios.worlds``, ``harness.scenarios.extras``), which import every family package
here once (``load``) and the modules each names in its ``REGISTERS``, which register themselves.
A family's package itself imports nothing, so that a process of its own (SIL-GPO's live
servers and users) starts without loading its learners. Families do not import each other
(import-linter contract "families are independent").
"""

from __future__ import annotations

import importlib
import pkgutil


def load() -> list[str]:
    """Import every family package and the modules it registers with (``REGISTERS``); their names."""
    names = [m.name for m in pkgutil.iter_modules(__path__) if m.ispkg]
    for name in names:
        package = importlib.import_module(f"{__name__}.{name}")
        for module in getattr(package, "REGISTERS", ()):
            importlib.import_module(f"{__name__}.{name}.{module}")
    return names
