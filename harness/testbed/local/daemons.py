"""Long-running helper processes of the testbed (the delayer; later Prometheus), tracked by pidfiles
under the state directory so that ``teardown`` finds them after a crash."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Callable

from harness.errors import TestbedError


def read_pid(pidfile: Path) -> int | None:
    try:
        pid = int(pidfile.read_text().strip())
    except (FileNotFoundError, ValueError):
        return None
    return pid if alive(pid) else None


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child of ours still answers kill(0); /proc tells the truth.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def start(argv: list[str], *, pidfile: Path, logfile: Path, ready_file: Path | None = None,
          ready: "Callable[[], bool] | None" = None, timeout: float = 10.0) -> bool:
    """Start ``argv`` detached (own session, survives the caller) unless its pidfile names a live
    process. Returns whether it started one. Waits until ``ready_file`` appears or ``ready()``
    says yes, when given."""
    if read_pid(pidfile) is not None:
        return False
    pidfile.parent.mkdir(parents=True, exist_ok=True)
    if ready_file is not None:
        ready_file.unlink(missing_ok=True)
    with open(logfile, "ab") as log:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True, close_fds=True)
    pidfile.write_text(f"{proc.pid}\n")
    if ready_file is None and ready is None:
        return True
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (ready_file is not None and ready_file.exists()) or (ready is not None and ready()):
            return True
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    stop(pidfile)
    tail = logfile.read_text(errors="replace")[-600:] if logfile.exists() else ""
    raise TestbedError(f"{' '.join(argv[:6])}... did not become ready within {timeout:g}s; log {logfile}: {tail.strip()}")


def stop(pidfile: Path, timeout: float = 5.0) -> bool:
    """SIGTERM, then SIGKILL after ``timeout``. Returns whether a process was stopped."""
    pid = read_pid(pidfile)
    pidfile.unlink(missing_ok=True)
    if pid is None:
        return False
    terminate(pid, timeout)
    return True


def terminate(pid: int, grace: float) -> None:
    """SIGTERM, wait up to ``grace`` seconds, then SIGKILL; reap it if it is our child.
    ``grace`` 0 kills at once."""
    try:
        os.kill(pid, signal.SIGTERM if grace > 0 else signal.SIGKILL)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace
    while alive(pid) and time.monotonic() < deadline:
        _reap(pid)
        time.sleep(0.02)
    if alive(pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    _reap(pid)


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass
