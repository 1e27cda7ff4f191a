"""Per-node cgroups: CPU bandwidth (the node's relative speed) and a memory cap.

Works on cgroup v1 (separate cpu and memory hierarchies, as on this project's machines) and
on cgroup v2 (one unified hierarchy), detected at run time.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from harness.errors import TestbedError

ROOT = Path("/sys/fs/cgroup")
SLICE_SYSCTL = "kernel.sched_cfs_bandwidth_slice_us"
SLICE = Path("/proc/sys", *SLICE_SYSCTL.split("."))
SLICE_SAVED = "cfs_bandwidth_slice_us.previous"  # in the testbed's run directory, for teardown


def is_v2() -> bool:
    return (ROOT / "cgroup.controllers").exists()


def _dirs(rel: str) -> list[Path]:
    """The directories that make up one cgroup: one per controller on v1, one on v2."""
    if is_v2():
        return [ROOT / rel]
    return [ROOT / "cpu" / rel, ROOT / "memory" / rel]


def _write(path: Path, value: str) -> bool:
    try:
        if path.read_text().strip() == value:
            return False
    except OSError:
        pass
    try:
        path.write_text(value)
    except OSError as exc:
        raise TestbedError(f"cannot write {value!r} to {path}: {exc.strerror}") from None
    return True


def _enable_v2_controllers(rel: str) -> None:
    """On v2 a child gets cpu/memory files only if every ancestor delegates those controllers."""
    parts = Path(rel).parts
    for depth in range(len(parts)):
        parent = ROOT.joinpath(*parts[:depth])
        ctl = parent / "cgroup.subtree_control"
        have = ctl.read_text().split()
        for c in ("cpu", "memory"):
            if c not in have:
                ctl.write_text(f"+{c}")


def ensure(rel: str, cpu_quota_us: int, cpu_period_us: int, memory_bytes: int) -> bool:
    changed = False
    for d in _dirs(rel):
        if not d.exists():
            d.mkdir(parents=True)
            changed = True
    if is_v2():
        _enable_v2_controllers(rel)
        d = ROOT / rel
        changed |= _write(d / "cpu.max", f"{cpu_quota_us} {cpu_period_us}")
        changed |= _write(d / "memory.max", str(memory_bytes))
    else:
        cpu, mem = _dirs(rel)
        changed |= _write(cpu / "cpu.cfs_period_us", str(cpu_period_us))
        changed |= _write(cpu / "cpu.cfs_quota_us", str(cpu_quota_us))
        changed |= _write(mem / "memory.limit_in_bytes", str(memory_bytes))
    return changed


def read_limits(rel: str) -> dict[str, int]:
    if is_v2():
        quota, period = (ROOT / rel / "cpu.max").read_text().split()
        return {"cpu_quota_us": int(quota), "cpu_period_us": int(period),
                "memory_bytes": int((ROOT / rel / "memory.max").read_text())}
    cpu, mem = _dirs(rel)
    return {"cpu_quota_us": int((cpu / "cpu.cfs_quota_us").read_text()),
            "cpu_period_us": int((cpu / "cpu.cfs_period_us").read_text()),
            "memory_bytes": int((mem / "memory.limit_in_bytes").read_text())}


def proc_files(rel: str) -> list[Path]:
    return [d / "cgroup.procs" for d in _dirs(rel)]


def join_paths(rel: str) -> list[str]:
    """Files a process writes its pid to, to enter the cgroup."""
    return [str(p) for p in proc_files(rel)]


def pids(rel: str) -> set[int]:
    out: set[int] = set()
    for f in proc_files(rel):
        try:
            out.update(int(x) for x in f.read_text().split())
        except FileNotFoundError:
            pass
    return out


def exists(rel: str) -> bool:
    return any(d.exists() for d in _dirs(rel))


def _kill_dir(d: Path, timeout: float = 5.0) -> int:
    """SIGKILL every process in one cgroup directory until it is empty."""
    killed = 0
    deadline = time.monotonic() + timeout
    while True:
        try:
            current = [int(x) for x in (d / "cgroup.procs").read_text().split()]
        except FileNotFoundError:
            return killed
        if not current:
            return killed
        for pid in current:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
        if time.monotonic() > deadline:
            raise TestbedError(f"processes {current} in {d} survive SIGKILL")
        time.sleep(0.02)


def _subdirs_deepest_first(d: Path) -> list[Path]:
    children = [p for p in d.rglob("*") if p.is_dir()]
    return sorted(children, key=lambda p: len(p.parts), reverse=True) + [d]


def kill_all(rel: str) -> int:
    """SIGKILL every process in the cgroup and below (a machine does not shut down politely when it crashes)."""
    return sum(_kill_dir(c) for d in _dirs(rel) if d.exists() for c in _subdirs_deepest_first(d))


def remove_tree(rel: str) -> bool:
    """Kill everything inside and remove the cgroup and its children (deepest first)."""
    removed = False
    for d in _dirs(rel):
        if not d.exists():
            continue
        for c in _subdirs_deepest_first(d):
            _kill_dir(c)
            try:
                c.rmdir()
                removed = True
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise TestbedError(f"cannot remove cgroup {c}: {exc.strerror}") from None
    return removed


def set_bandwidth_slice(us: int, run_dir: Path) -> bool:
    """Set the kernel's CFS bandwidth slice (host-wide: the runtime a CPU takes from a cgroup's
    quota at a time), keeping the host's own value in ``run_dir`` the first time, for
    ``restore_bandwidth_slice``. Returns whether anything changed."""
    if not SLICE.exists():
        raise TestbedError(f"{SLICE} is missing: this kernel has no CFS bandwidth control; set "
                           "local.bandwidth_slice_us to null in the inventory")
    saved = run_dir / SLICE_SAVED
    if not saved.exists():
        run_dir.mkdir(parents=True, exist_ok=True)
        saved.write_text(SLICE.read_text().strip())
    return _write(SLICE, str(us))


def restore_bandwidth_slice(run_dir: Path) -> bool:
    """Put back the slice ``set_bandwidth_slice`` found (nothing when it never ran)."""
    saved = run_dir / SLICE_SAVED
    if not saved.exists():
        return False
    _write(SLICE, saved.read_text().strip())
    saved.unlink()
    return True
