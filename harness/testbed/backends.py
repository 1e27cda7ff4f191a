"""The one table that maps a backend name to its provision, open and teardown. A backend is one
package with these three functions; adding one is that package and one line here.

    provision(inventory, state_dir, on_progress, measure) -> (TestbedState, PlaybookResult)
    open(state, state_dir) -> Cluster
    teardown(state or None, inventory, state_dir) -> str   (what it removed, for the user)
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable

from harness.errors import UserError

BACKENDS = {
    "local": ("harness.testbed.local.provision:provision", "harness.testbed.local.backend:open_local",
              "harness.testbed.local.teardown:teardown_testbed"),
    "k3s": ("harness.testbed.kube.provision:provision", "harness.testbed.kube.provision:open_kube",
            "harness.testbed.kube.provision:teardown_testbed"),
    # a Kubernetes cluster of the user's, attached through --kubeconfig/--context, never provisioned
    "existing": ("harness.testbed.kube.existing:provision", "harness.testbed.kube.existing:open_existing",
                 "harness.testbed.kube.existing:teardown_testbed"),
}


@dataclass(frozen=True)
class Backend:
    name: str
    provision: Callable
    open: Callable
    teardown: Callable


def _load(ref: str) -> Callable:
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)


def backend(name: str, source: str | None = None) -> Backend:
    """The backend of that name, its functions imported only now (each pulls its own libraries)."""
    if name not in BACKENDS:
        raise UserError(f"unknown backend {name!r} (known: {', '.join(BACKENDS)})", source=source, field="backend")
    return Backend(name, *(_load(ref) for ref in BACKENDS[name]))
