"""Where the files harness ships live: its workloads, profiles, models, inventories, scenarios,
playbooks and manifests.

One rule for every caller (the CLI's defaults, the simulator's example app, the testbeds'
playbooks and manifests, the studies): a relative name is looked up in the current directory
first (a user's own `workloads/` beside theirs), then in harness's own tree. Nothing else in
harness computes that tree's place: the repository in a checkout, the package's `_shipped/`
folder in an installed wheel (setup.py copies it there).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path



def _root() -> Path:
    package = Path(str(resources.files("harness")))
    checkout = package.parent
    if (checkout / "pyproject.toml").is_file() and (checkout / "workloads").is_dir():
        return checkout  # a checkout, or an editable install of one
    return package / "_shipped"


ROOT = _root()
REACH_APPS = ("chain", "aggregator-sequential", "aggregator-parallel")  # REACH's three apps (Fig. 5)
DEFAULT_TESTBED = "reach-local"


def find(rel: str | Path) -> Path:
    """``rel`` in the current directory if it is there, else in harness's own tree (which may not
    have it either: the caller's error then names the shipped path)."""
    p = Path(rel)
    if p.is_absolute() or p.exists():
        return p
    return ROOT / p


def workload(name: str) -> Path:
    """A shipped app: ``workloads/<name>.json``."""
    return find(f"workloads/{name}.json")


def profile(app: str, testbed: str = DEFAULT_TESTBED, calibrated: bool = False) -> Path:
    """An app's profile on a testbed: ``profiles/<app>.<testbed>[.calibrated].json``."""
    return find(f"profiles/{app}.{testbed}{'.calibrated' if calibrated else ''}.json")


def models() -> Path:
    """The folder of the committed models (``<policy>-<app>.pt``)."""
    return find("models")


def model(policy: str, app: str, model_dir: str | Path | None = None) -> Path:
    """A committed (or named) model: ``<model_dir>/<policy>-<app>.pt``, ``models/`` by default."""
    return (Path(model_dir) if model_dir is not None else models()) / f"{policy}-{app}.pt"


def commit() -> str | None:
    """The commit harness runs from: the checkout's HEAD, or in a wheel the one it was built
    from (``_shipped/COMMIT``, written by setup.py's build step); None when neither says."""
    import subprocess

    stamp = ROOT / "COMMIT"
    if stamp.is_file():
        return stamp.read_text().strip() or None
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5)
        return out.stdout.strip() or None
    except (OSError, subprocess.TimeoutExpired):
        return None
