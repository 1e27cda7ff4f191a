"""Run a playbook with ansible-runner and turn its event stream into progress updates.

Live progress comes from runner events: the current task, and ok/changed/failed counts
(items of a loop count one each). A failed task raises PlaybookFailed with Ansible's message.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from harness.errors import TestbedError
from harness.interrupts import sigint_sets

PLAYBOOKS_ENV = "HARNESS_PLAYBOOKS"
ANSIBLE_INTERRUPTED = 99  # ansible-playbook's exit status after SIGINT


def playbook_processes(private_data_dir: Path) -> list[int]:
    """Processes still running a playbook of ``private_data_dir`` (its ansible-playbook and the
    workers it forked: their command line or working directory lies under it), e.g. after the
    harness that started them was killed with -9, which ansible-runner cannot see coming."""
    root = str(Path(private_data_dir).resolve())
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            cwd = os.readlink(proc / "cwd")
        except OSError:
            continue  # gone, or not ours to read
        if "ansible" in cmd and (root in cmd or cwd == root or cwd.startswith(root + "/")):
            found.append(int(proc.name))
    return found


def stop_playbooks(private_data_dir: Path) -> list[int]:
    """Kill every process ``playbook_processes`` finds (SIGKILL: a playbook left behind has no one
    to report to); the pids."""
    pids = playbook_processes(private_data_dir)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return pids


def playbooks_dir() -> Path:
    """The shipped playbooks/ (harness.shipped), or $HARNESS_PLAYBOOKS."""
    from harness import shipped

    env = os.environ.get(PLAYBOOKS_ENV)
    d = Path(env) if env else shipped.ROOT / "playbooks"
    if not (d / "library").is_dir():
        raise TestbedError(f"playbooks not found at {d}; set {PLAYBOOKS_ENV} to the repository's playbooks/ folder")
    return d


@dataclass
class Progress:
    """What a progress display needs after every event."""

    task: str = ""
    item: str | None = None
    counts: Counter = field(default_factory=Counter)  # ok, changed, failed, skipped


@dataclass
class PlaybookResult:
    status: str
    counts: Counter
    results: dict[str, list[dict[str, Any]]]  # task name -> module results (one per item)

    @property
    def changed(self) -> int:
        return self.counts["changed"]


class PlaybookFailed(TestbedError):
    def __init__(self, task: str, msg: str):
        self.task = task
        super().__init__(f"task '{task}' failed: {msg}")


def _label(res: dict) -> str | None:
    return res.get("_ansible_item_label") if isinstance(res, dict) else None


LOCALHOST = f"localhost ansible_connection=local ansible_python_interpreter={sys.executable}"


def run_playbook(playbook: str, *, extravars: dict[str, Any], private_data_dir: Path,
                 on_progress: Callable[[Progress], None] | None = None,
                 inventory: Path | None = None) -> PlaybookResult:
    """Run ``playbook`` from playbooks/ against ``inventory`` (an inventory file; default: this
    host only). The K3s playbooks' localhost plays run in this interpreter too."""
    import ansible_runner  # heavy: imported only when a playbook really runs

    pb_dir = playbooks_dir()
    progress = Progress()
    results: dict[str, list[dict[str, Any]]] = {}
    failure: list[tuple[str, str]] = []

    def handle(event: dict) -> bool:
        kind = event.get("event", "")
        data = event.get("event_data", {})
        task = data.get("task", progress.task)
        res = data.get("res", {}) if isinstance(data.get("res"), dict) else {}
        if kind == "playbook_on_task_start":
            progress.task, progress.item = task, None
        elif kind in ("runner_on_ok", "runner_item_on_ok"):
            if kind == "runner_on_ok" and "results" in res:  # a loop's summary; its items were counted
                pass
            else:
                progress.counts["changed" if res.get("changed") else "ok"] += 1
                results.setdefault(task, []).append(res)
                progress.item = _label(res)
        elif kind in ("runner_on_failed", "runner_item_on_failed", "runner_on_unreachable"):
            if kind == "runner_on_failed" and "results" in res:
                pass
            elif not data.get("ignore_errors"):
                progress.counts["failed"] += 1
                failure.append((task, str(res.get("msg") or res.get("stderr") or res)))
        elif kind in ("runner_on_skipped", "runner_item_on_skipped"):
            progress.counts["skipped"] += 1
        if on_progress:
            on_progress(progress)
        return False  # not kept on disk: an event can carry facts (ansible_env) and every variable

    private_data_dir.mkdir(parents=True, exist_ok=True)
    venv_bin = str(Path(sys.executable).parent)  # ansible-playbook lives beside our interpreter
    # ansible-runner starts ansible-playbook through pexpect, in a session of its own, and Ansible's
    # workers each call setsid(): a terminal's Ctrl-C reaches none of them, and left alone they would
    # go on building after we exit (racing the user's teardown). So Ctrl-C only marks the run; the
    # cancel callback then kills every process below this one, and we raise KeyboardInterrupt.
    interrupted = threading.Event()
    try:
        with sigint_sets(interrupted):
            runner = _run(ansible_runner, pb_dir, playbook, inventory, private_data_dir, extravars, venv_bin, handle,
                          interrupted)
    finally:
        scrub_artifacts(private_data_dir)
    if interrupted.is_set() or runner.rc == ANSIBLE_INTERRUPTED or runner.status == "canceled":
        raise KeyboardInterrupt  # Ctrl-C reached us or ansible-playbook; the playbook has ended
    if failure:
        raise PlaybookFailed(*failure[0])
    if runner.status != "successful":
        tail = (runner.stdout.read()[-800:] if runner.stdout else "").strip()
        raise TestbedError(f"ansible-runner ended with status {runner.status} (rc {runner.rc}): {tail}")
    return PlaybookResult(runner.status, progress.counts, results)


def scrub_artifacts(private_data_dir: Path) -> int:
    """ansible-runner writes the whole environment of whoever ran it (tokens, passwords, cloud
    credentials) into artifacts/<id>/command before the playbook starts; keep the command and
    its folder, drop the environment. Returns how many files it rewrote."""
    n = 0
    for path in (private_data_dir / "artifacts").glob("*/command"):
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError):
            path.unlink(missing_ok=True)
            continue
        if doc.get("env"):
            doc["env"] = {"removed": "harness keeps no environment on disk"}
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(doc))
            os.chmod(tmp, 0o600)
            tmp.replace(path)
            n += 1
    return n


def kill_descendants(root: int, rounds: int = 3) -> int:
    """SIGKILL every process below ``root`` (walking /proc's parent links; a few rounds, as a dying
    tree may still fork); returns how many were signalled."""
    killed = 0
    for _ in range(rounds):
        children: dict[int, list[int]] = {}
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                pid = int(stat.parent.name)
                ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(pid)
        stack, found = list(children.get(root, [])), []
        while stack:
            pid = stack.pop()
            found.append(pid)
            stack += children.get(pid, [])
        if not found:
            break
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
    return killed


def _run(ansible_runner, pb_dir: Path, playbook: str, inventory: Path | None, private_data_dir: Path,
         extravars: dict[str, Any], venv_bin: str, handle, interrupted: threading.Event):
    return ansible_runner.run(
        private_data_dir=str(private_data_dir),
        playbook=str(pb_dir / playbook),
        inventory=str(inventory) if inventory else LOCALHOST,
        extravars=extravars,
        envvars={
            "PATH": f"{venv_bin}:{os.environ.get('PATH', '/usr/sbin:/usr/bin:/sbin:/bin')}",
            "ANSIBLE_LIBRARY": str(pb_dir / "library"),
            "ANSIBLE_ROLES_PATH": str(pb_dir / "roles"),
            "ANSIBLE_LOCALHOST_WARNING": "False",
            "ANSIBLE_INVENTORY_UNPARSED_WARNING": "False",
            "ANSIBLE_NOCOLOR": "True",
            "ANSIBLE_PIPELINING": "True",
            "ANSIBLE_HOST_KEY_CHECKING": "False",  # fresh VMs: their keys are not known yet
        },
        event_handler=handle,
        cancel_callback=lambda: interrupted.is_set() and kill_descendants(os.getpid()) >= 0,
        settings={"pexpect_timeout": 0.2},  # how often the cancel flag is looked at
        quiet=True,
        rotate_artifacts=5,
        suppress_env_files=True,  # no env/envvars, env/extravars copies on disk
    )
