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


# what a bare name means for each kind of file a user names: its folder and suffix among harness's own
NAMED = {"app": ("workloads", ".json"), "profile": ("profiles", ".json"), "inventory": ("inventories", ".yaml")}


def user_file(ref: str | Path, kind: str) -> Path:
    """A file a user names: a path (it has a folder or a suffix, or is there) is theirs, relative to
    where they stand, and must be there; a bare name is harness's file of that ``kind`` (``chain``:
    ``workloads/chain.json``; ``chain.reach-local``: ``profiles/chain.reach-local.json``;
    ``reach-local``: the inventory), the user's own copy in the current folder first. A missing one
    is one UserError line naming what the user gave."""
    from harness.errors import UserError

    p = Path(ref)
    folder, suffix = NAMED[kind]
    if p.exists():
        return p
    if not p.is_absolute() and len(p.parts) == 1 and p.suffix not in (".json", ".yaml", ".yml"):
        package_data = Path(str(resources.files("harness"))) / "data" / folder  # reach-local, the default testbed
        for candidate in (find(f"{folder}/{p}{suffix}"), package_data / f"{p}{suffix}"):
            if candidate.exists():
                return candidate
        known = sorted(q.name.removesuffix(suffix) for q in (ROOT / folder).glob(f"*{suffix}")) if (ROOT / folder).is_dir() else []
        raise UserError(f"no {kind} named {str(ref)!r}" + (f" (harness ships: {', '.join(known)})" if known else ""),
                        field=f"--{kind}")
    raise UserError(f"no such file (a path is read from where you stand; {'an' if kind[0] in 'aeiou' else 'a'} {kind} "
                    f"harness ships is named alone, "
                    f"e.g. {_example(kind)})", source=str(ref), field=f"--{kind}")


def _example(kind: str) -> str:
    return {"app": "--app chain", "profile": "--profile chain.reach-local", "inventory": "--inventory reach-local"}[kind]


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
