"""The testbed state file: written by ``provision``, read by every later command.

Default path ``.harness/testbed.yaml``. It says which backend runs, every node with its type,
tier, address and capacities, and the configured and measured RTT matrices.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Literal

import yaml
from pydantic import BaseModel, ConfigDict, model_validator

from harness.errors import UserError
from harness.spec.loader import load_model
from harness.spec.rtt import GroupedRTT


class NodeState(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    type: str
    tier: str
    address: str
    cpus: float
    memory_gb: float
    speed: float
    role: str = ""  # cloud | edge | client (the tier's role; state files before roles: the tier itself)
    site: str | None = None
    cost: float = 0.0  # per hour
    gpus: int = 0

    @model_validator(mode="after")
    def _role(self):
        if not self.role:
            self.role = self.tier
        return self


class TestbedState(BaseModel):
    model_config = ConfigDict(extra="forbid")
    backend: str  # a name of harness.testbed.backends (local, k3s)
    name: str
    status: Literal["provisioning", "ready"]
    inventory_checksum: str
    inventory: dict[str, Any]  # the inventory it was built from, verbatim after validation
    created: str
    nodes: list[NodeState]
    latency_injector: str | None = None  # netem | nfqueue
    latency_injector_reason: str | None = None
    rtt_configured_ms: dict[str, dict[str, float]] = {}
    # the configured RTTs per group of nodes (harness.spec.rtt.GroupedRTT.to_json), instead of every
    # pair in rtt_configured_ms: a simulated testbed's, whatever its size
    rtt_groups: dict[str, Any] | None = None
    rtt_measured_ms: dict[str, dict[str, float | None]] = {}
    bandwidth_mbit: dict[str, dict[str, float]] = {}  # configured, for the pairs a link limits
    bandwidth_emulation: str | None = None  # how the testbed enforces it, or why it cannot
    prometheus_url: str | None = None
    backend_data: dict[str, Any] = {}  # backend-specific (the local layout)

    def data(self, key: str, state_dir: Path, parse: Callable[[Any], Any] = lambda v: v) -> Any:
        """A backend's recorded datum, parsed; a state file that lacks it or holds half of it (cut
        short, edited) is one clear line, not a KeyError."""
        try:
            return parse(self.backend_data[key])
        except (KeyError, TypeError, ValueError) as exc:
            what = "missing" if key not in self.backend_data else f"incomplete ({type(exc).__name__}: {exc})"
            raise UserError(f"the state file is damaged: backend_data.{key} is {what}; 'harness teardown' removes "
                            f"what it can find of the testbed", source=str(state_path(state_dir))) from None

    def configured_rtt(self) -> GroupedRTT:
        """The configured RTTs: ``rtt_groups`` when the state holds them, else every pair of
        ``rtt_configured_ms``, each node a group of its own."""
        if self.rtt_groups is not None:
            return GroupedRTT.from_json(self.rtt_groups)
        return GroupedRTT.from_matrix(self.rtt_configured_ms)

    def node(self, name: str) -> NodeState:
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(name)


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def state_path(state_dir: Path) -> Path:
    return state_dir / "testbed.yaml"


def load_state(state_dir: Path) -> TestbedState | None:
    path = state_path(state_dir)
    if not path.exists():
        return None
    return load_model(TestbedState, path)


def save_state(state_dir: Path, state: TestbedState) -> Path:
    """Write atomically so that a crash never leaves half a state file."""
    state_dir.mkdir(parents=True, exist_ok=True)
    path = state_path(state_dir)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(yaml.safe_dump(state.model_dump(mode="json"), sort_keys=False, width=120))
    os.replace(tmp, path)
    return path


def remember_state_dir(state_dir: Path) -> None:
    """``harness provision`` made a testbed here: commands run from another folder find it."""
    try:
        last = last_state_file()
        last.parent.mkdir(parents=True, exist_ok=True)
        last.write_text(str(state_dir.resolve()) + "\n")
    except OSError:
        pass  # a read-only home: commands elsewhere need --state-dir, nothing else changes


def forget_state_dir(state_dir: Path) -> None:
    """``harness teardown`` removed the testbed remembered last."""
    try:
        if Path(last_state_file().read_text().strip()) == state_dir.resolve():
            last_state_file().unlink()
    except (OSError, ValueError):
        pass


def last_state_file() -> Path:
    """Where the last state folder written is remembered (XDG's state home)."""
    return Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local/state") / "harness" / "last-state-dir"


def default_state_dir() -> tuple[Path, bool]:
    """``./.harness`` when it holds a testbed, else the folder of the last testbed provisioned
    when that still holds one (a command run from another folder finds the running testbed), else
    ``./.harness``; and whether the last one was taken."""
    here = Path(".harness")
    if state_path(here).exists():
        return here, False
    try:
        last = Path(last_state_file().read_text().strip())
    except (OSError, ValueError):
        return here, False
    return (last, True) if last != here.resolve() and state_path(last).exists() else (here, False)
