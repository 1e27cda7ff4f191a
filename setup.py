"""Only what pyproject.toml cannot say: the wheel carries harness's shipped data.

The apps, profiles, models, inventories, scenarios, leaderboards, playbooks, manifests and the
cell image's Dockerfile live at the repository's top level, where users read and copy them. A
wheel has no top level: build_py copies them into ``harness/_shipped/``, which
``harness.shipped.ROOT`` reads when the package is not a checkout.
"""

import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

SHIPPED = ("workloads", "profiles", "models", "inventories", "scenarios", "leaderboards", "playbooks", "manifests",
           "images")


# Gymnasium 1.x has no entry-point plugins: this start-up line lets gymnasium.make("harness/CEEnv-v0")
# work with no import of harness first (harness.gym_envs; a few lines, no third-party import)
GYM_PTH = ("harness-gymnasium.pth", "import harness\n")


class BuildPyWithShippedData(build_py):
    def run(self):
        super().run()
        if self.editable_mode:  # an editable install reads the checkout itself
            return
        target = Path(self.build_lib) / "harness" / "_shipped"
        for name in SHIPPED:
            shutil.rmtree(target / name, ignore_errors=True)
            shutil.copytree(Path(name), target / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        (Path(self.build_lib) / GYM_PTH[0]).write_text(GYM_PTH[1])
        # the commit the wheel is built from, for a run's and a model's provenance (harness.shipped.commit)
        try:
            out = subprocess.run(["git", "-C", str(Path(__file__).resolve().parent), "rev-parse", "HEAD"],
                                 capture_output=True, text=True, timeout=10)
            commit = out.stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            commit = ""
        (target / "COMMIT").write_text(commit + "\n")


setup(cmdclass={"build_py": BuildPyWithShippedData})
