"""harness's Gymnasium environments, registered by id, with no import of the environments
themselves (Gymnasium imports a module only when an id of it is made).

Gymnasium 1.0 removed the ``gymnasium.envs`` entry-point plugins that used to find a package's
environments, so ``gymnasium.make("harness/CEEnv-v0")`` (or ``"harness/MultiCluster-v0"``) needs
this registration to have run. It
runs when ``harness.sim.ceenv`` is imported, when gymnasium is imported after ``harness``
(``watch()``, installed by ``harness/__init__``), and in an installed wheel at interpreter
start-up: the wheel's ``harness-gymnasium.pth`` calls ``watch()``, which costs one entry in
``sys.meta_path`` until gymnasium is imported.
"""

from __future__ import annotations

import sys

# id -> (entry point, vector entry point or None)
ENVS = {"harness/CEEnv-v0": ("harness.sim.ceenv:CEEnv", "harness.sim.ceenv:CEEnvVector"),
        "harness/MultiCluster-v0": ("harness.families.hephaestus.gym:MultiClusterGym", None)}


def register() -> None:
    import gymnasium

    for env_id, (entry, vector) in ENVS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=entry, **({"vector_entry_point": vector} if vector else {}))


class _AfterGymnasium:
    """A meta path finder (a plain class: importlib.abc alone costs 10 ms at every start-up) that
    registers harness's ids right after gymnasium's own module has run, once."""

    def find_spec(self, name, path=None, target=None):
        if name != "gymnasium":
            return None
        import importlib.util

        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        loader_exec = spec.loader.exec_module

        def exec_module(module):
            loader_exec(module)
            register()

        spec.loader.exec_module = exec_module
        return spec


def watch() -> None:
    if "gymnasium" in sys.modules:
        register()
    elif not any(isinstance(f, _AfterGymnasium) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterGymnasium())
