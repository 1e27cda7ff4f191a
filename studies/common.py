"""What the studies share: the shipped apps, profiles and models, found through harness's own
API (``harness.shipped``), and the way a study prints its checks."""

from __future__ import annotations

from pathlib import Path

from harness import shipped
from harness.sim.ceenv import EnvConfig, load_dynamics

REACH_APPS = shipped.REACH_APPS
PROFILE = "profiles/{app}.reach-local.json"  # REACH's apps on REACH's testbed, the committed profiles


def profile_file(app: str, pattern: str = PROFILE) -> Path:
    """An app's profile: ``pattern`` with ``{app}`` filled in, found as harness finds its files."""
    return shipped.find(pattern.format(app=app))


def dynamics(app: str, pattern: str = PROFILE, env: EnvConfig | None = None):
    """(app, profile, Dynamics) of a shipped app on the profile ``pattern`` names."""
    return load_dynamics(shipped.workload(app), profile_file(app, pattern), None, env)


def model(policy: str, app: str, model_dir: Path | None = None) -> Path:
    """The committed model of ``policy`` for ``app`` (``models/<policy>-<app>.pt``), or the one in
    ``model_dir``."""
    return shipped.model(policy, app, model_dir)


def verdict(ok: bool | None) -> str:
    """PASS, FAIL, or UNDECIDED (None: the measurement is too noisy to tell)."""
    return "UNDECIDED" if ok is None else "PASS" if ok else "FAIL"
