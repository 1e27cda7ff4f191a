"""One command at a time changes a testbed: an exclusive lock in the state directory.

``run``, ``deploy``, ``undeploy``, ``profile``, ``provision`` and ``teardown`` hold it while they
work; a second one refuses at once, in one line naming the holder. The lock is an ``flock`` on
``<state-dir>/lock``: the kernel drops it when its holder exits, however it exits (kill -9
included), so a crashed holder never leaves it behind. The file also records who holds it, for
that one line. Pods and load generators are started with close-on-exec descriptors and do not
inherit it.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from harness.errors import UserError

LOCK_FILE = "lock"


def _holder(f) -> str:
    try:
        f.seek(0)
        h = json.loads(f.read() or "{}")
        since = time.strftime("%H:%M:%S", time.localtime(h["since"]))
        return f"'{h['command']}' (pid {h['pid']}, since {since})"
    except (ValueError, KeyError, TypeError, OSError):
        return "another harness command"


@contextmanager
def exclusive(state_dir: Path, command: str | None = None) -> Iterator[None]:
    """Hold the testbed's lock for the block, or raise a UserError naming who holds it."""
    state_dir.mkdir(parents=True, exist_ok=True)
    path = state_dir / LOCK_FILE
    f = open(path, "a+")  # never truncated before we hold it: the holder's record stays readable
    try:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UserError(f"the testbed is busy: {_holder(f)} is using it; wait for it to end or stop it",
                            source=str(path)) from None
        f.seek(0)
        f.truncate()
        cmd = command or "harness " + " ".join(sys.argv[1:])
        f.write(json.dumps({"pid": os.getpid(), "command": cmd, "since": time.time()}))
        f.flush()
        try:
            yield
        finally:
            f.seek(0)
            f.truncate()
            fcntl.flock(f, fcntl.LOCK_UN)
    finally:
        f.close()
