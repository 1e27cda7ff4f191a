"""The root tests in a second pytest process, beside the rest (registered by tests/conftest.py).

The root tests spend their time on a live testbed waiting on the clock (scenario durations, emulated
RTTs, pods starting and draining); the others mostly compute. On a 2-core host the two kinds
overlap well. So when a session as root holds both kinds:

- a worker (``python -m pytest`` on the root tests' files, keeping only their node ids) runs the
  root tests one after another on its own testbeds, as they would have run here (session-scoped
  testbed, clean-up on failure, the safety net of conftest.py), module by module; first those
  marked ``host_timing`` (they measure CPU shares and RTTs), while this process waits;
- this process runs the other tests meanwhile, its priority lowered so that the testbed's
  processes come first; then it takes, from the back, the modules of root tests marked
  ``load_tolerant`` (their assertions do not depend on the host's speed or timing) that the
  worker has not begun, and runs them on a testbed of its own: whichever process is free takes
  the next module (a file under ``<basetemp>/testbed-worker/claims`` says who has it), so the
  two end together;
- then it replays the worker's reports as its own: the one session reports every test once, its
  outcome, its output and its duration, and its exit status counts them all.

``HARNESS_TESTS_SERIAL=1`` runs every test in this one process, as before. Never split: not root,
only one kind selected, ``--collect-only``, ``--setup-only/plan``, ``--pdb``, ``--trace``, ``-s``.
The worker's own output (collection, warnings) is in ``<basetemp>/testbed-worker/worker.log``;
options on the command line other than which tests apply to this process only (the ini options,
e.g. the timeout, to both). A test the worker did not report (it died, or could not collect the
file) fails here with the end of that log; if the worker died, this process runs what it had not
begun. Ctrl-C, ``-x`` or this process dying stop the worker, which cleans up first.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

WORKER_ENV = "HARNESS_TESTBED_WORKER"  # in the worker: the folder of its item list, claims and reports
SERIAL_ENV = "HARNESS_TESTS_SERIAL"
NICE = 10  # this process and what it starts, once the worker runs: the worker's testbed comes first
STOP_WAIT_S = 300  # a stopped worker's clean-up (undeploy, teardown of its testbeds)


def register(config: pytest.Config) -> None:
    folder = os.environ.pop(WORKER_ENV, None)  # not inherited: a test's own pytest is a session of its own
    if folder:
        os.environ["HARNESS_TESTS_SIDE"] = "worker"  # tests/conftest.py's unique_subnet: the worker's half
        config.pluginmanager.register(Worker(config, Path(folder)), "harness-testbed-worker")
    elif os.environ.get(SERIAL_ENV, "") in ("", "0"):
        config.pluginmanager.register(Split(config), "harness-testbed-split")


def is_root(item: pytest.Item) -> bool:
    return item.get_closest_marker("root") is not None


def tolerant(item: pytest.Item) -> bool:
    return item.get_closest_marker("load_tolerant") is not None


def host_timing(item: pytest.Item) -> bool:
    return item.get_closest_marker("host_timing") is not None


def kind(item: pytest.Item) -> int:
    """The worker's order: host-timing tests first (the main process waits for them), then the
    others, the load-tolerant last (the main process takes those from the back)."""
    return 0 if host_timing(item) else 2 if tolerant(item) else 1


def group_of(item: pytest.Item) -> str:
    """The unit either process takes: a module's root tests of one kind."""
    return item.nodeid.split("::")[0] + {0: " [host_timing]", 1: "", 2: " [load_tolerant]"}[kind(item)]


def groups(items) -> dict[str, list]:
    """Groups in the worker's order (``kind``), each group's items in their order."""
    out: dict[str, list] = {}
    for item in sorted(items, key=kind):  # stable: file order kept within each kind
        out.setdefault(group_of(item), []).append(item)
    return out


def claim(folder: Path, group: str) -> bool:
    """Atomically take a group; False if the other process has it."""
    name = hashlib.sha1(group.encode()).hexdigest()[:16]
    try:
        os.close(os.open(folder / "claims" / name, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    (folder / "claims" / f"{name}.group").write_text(f"{group} {os.getpid()}\n")
    return True


def run_groups(session, todo: list[list], take, ran=lambda g: None) -> None:
    """Run groups of items in order while ``take(index)`` gets the next one, calling ``ran(index)``
    after each; a group's last item knows whether another follows (its teardown keeps what the
    next one shares)."""
    if not todo or not take(0):
        return
    for g, items in enumerate(todo):
        for i, item in enumerate(items):
            if i + 1 < len(items):
                nextitem = items[i + 1]
            else:
                nextitem = todo[g + 1][0] if g + 1 < len(todo) and take(g + 1) else None
            item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
            if session.shouldfail:
                raise session.Failed(session.shouldfail)
            if session.shouldstop:
                raise session.Interrupted(session.shouldstop)
        ran(g)
        if nextitem is None:
            return


class Worker:
    """In the worker: the listed items only, group by group while it can claim them; each report
    written as one JSON line."""

    def __init__(self, config: pytest.Config, folder: Path):
        self.config, self.folder = config, folder
        self.wanted = set((folder / "items.txt").read_text().splitlines())
        self.out = open(folder / "reports.jsonl", "a", encoding="utf-8")
        # stopped by SIGTERM as by SIGINT (whose handler tests/conftest.py sets, even for a suite
        # started with it ignored), it takes pytest's Ctrl-C path, which tears its testbeds down
        signal.signal(signal.SIGTERM, _interrupt)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config, items):
        keep = [i for i in items if i.nodeid in self.wanted]
        drop = [i for i in items if i.nodeid not in self.wanted]
        if drop:
            config.hook.pytest_deselected(items=drop)
        items[:] = keep

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session):
        if session.testsfailed and not session.config.option.continue_on_collection_errors:
            raise session.Interrupted(f"{session.testsfailed} errors during collection")
        todo = list(groups(session.items).items())
        quiet = sum(host_timing(items[0]) for _, items in todo)  # the first ones
        try:
            if not quiet:
                self.quiet_done()
            run_groups(session, [items for _, items in todo], lambda g: claim(self.folder, todo[g][0]),
                       lambda g: g + 1 == quiet and self.quiet_done())
        finally:
            self.quiet_done()
        return True

    def quiet_done(self) -> None:
        (self.folder / "quiet.done").touch()

    def pytest_runtest_logreport(self, report):
        data = self.config.hook.pytest_report_to_serializable(config=self.config, report=report)
        self.out.write(json.dumps(data, default=str) + "\n")
        self.out.flush()

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self):
        for sig in (signal.SIGINT, signal.SIGTERM):  # the testbeds' teardown, now, is not to be cut short
            signal.signal(sig, signal.SIG_IGN)

    def pytest_unconfigure(self):
        self.out.close()


class Split:
    """In the main process: start the worker, run the other tests, take load-tolerant groups the
    worker has not begun, replay the worker's reports."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.remote: list = []  # the root items, in the worker's order
        self.proc: subprocess.Popen | None = None
        self.folder: Path | None = None
        self.reports: dict[str, list] = {}
        self.offset = 0
        self.ran_here: set[str] = set()
        self.interrupted = False

    def wanted(self, items) -> bool:
        opt = self.config.option
        if os.geteuid() != 0 or opt.collectonly or getattr(opt, "setuponly", False) or getattr(opt, "setupplan", False):
            return False
        if getattr(opt, "usepdb", False) or getattr(opt, "trace", False) or getattr(opt, "capture", "fd") == "no":
            return False
        return {is_root(i) for i in items} == {True, False}

    @pytest.hookimpl(trylast=True)  # after -m/-k deselection and fixture reordering
    def pytest_collection_modifyitems(self, session, config, items):
        if self.wanted(items):
            self.remote = [i for g in groups([i for i in items if is_root(i)]).values() for i in g]

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session):
        if not self.remote or session.config.option.collectonly:
            return None  # pytest's own loop
        if session.testsfailed and not session.config.option.continue_on_collection_errors:
            raise session.Interrupted(f"{session.testsfailed} errors during collection")
        self.start(session)
        self.wait_quiet(session)
        remote = {i.nodeid for i in self.remote}
        local = [i for i in session.items if i.nodeid not in remote]
        run_groups(session, [local], lambda g: True)
        # the load-tolerant groups the worker has not begun, from the back
        todo = [items for items in groups(self.remote).values() if kind(items[0]) == 2][::-1]
        run_groups(session, todo, lambda g: self.take(todo[g]))
        if self.worker_died():  # what it had not begun, here, now alone on the host
            todo = [items for items in groups(self.remote).values()]
            run_groups(session, todo, lambda g: self.take(todo[g]))
        for item in self.remote:  # the worker's, as it reports them
            if item.nodeid not in self.ran_here:
                self.replay(item)
                if session.shouldfail:
                    raise session.Failed(session.shouldfail)
                if session.shouldstop:
                    raise session.Interrupted(session.shouldstop)
        return True

    def wait_quiet(self, session) -> None:
        """The worker's host-timing tests (and the testbed they measure, provisioned with them)
        first, with this process idle: they measure CPU shares and RTTs on this host."""
        if not any(host_timing(i) for i in self.remote):
            return
        tr = session.config.pluginmanager.get_plugin("terminalreporter")
        if tr is not None:
            tr.write_line("waiting for the worker's host_timing tests, which want the host to themselves")
        deadline = time.monotonic() + STOP_WAIT_S
        while not (self.folder / "quiet.done").exists() and self.proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)

    def take(self, items) -> bool:
        if not claim(self.folder, group_of(items[0])):
            return False
        self.ran_here.update(i.nodeid for i in items)
        return True

    def worker_died(self) -> bool:
        return self.proc.poll() is not None and self.proc.returncode not in (0, 1, 5)

    def start(self, session) -> None:
        config = session.config
        self.folder = config._tmp_path_factory.getbasetemp() / "testbed-worker"
        (self.folder / "claims").mkdir(parents=True)
        (self.folder / "items.txt").write_text("".join(f"{i.nodeid}\n" for i in self.remote))
        (self.folder / "reports.jsonl").touch()
        files = sorted({str(i.path) for i in self.remote})
        ini = ["-c", str(config.inipath)] if config.inipath else []
        cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--basetemp", str(self.folder / "tmp"),
               "--rootdir", str(config.rootpath), *ini, *files]
        with open(self.folder / "worker.log", "w") as log:
            self.proc = subprocess.Popen(cmd, cwd=config.invocation_params.dir, stdout=log, stderr=subprocess.STDOUT,
                                         env={**os.environ, WORKER_ENV: str(self.folder)},
                                         start_new_session=True, preexec_fn=_stop_with_parent)  # one Ctrl-C: ours
        tr = config.pluginmanager.get_plugin("terminalreporter")
        if tr is not None:
            tr.write_line(f"{len(self.remote)} root tests run beside the others by a second pytest "
                          f"(pid {self.proc.pid}, log {self.folder / 'worker.log'})")
        try:
            os.nice(NICE)
        except OSError:
            pass

    def replay(self, item) -> None:
        item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        for report in self.wait_for(item):
            item.ihook.pytest_runtest_logreport(report=report)
        item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)

    def done(self, nodeid: str) -> bool:
        got = self.reports.get(nodeid)
        return bool(got) and got[-1].when == "teardown"

    def wait_for(self, item) -> list:
        while True:
            self.read()
            if self.done(item.nodeid):
                return self.reports[item.nodeid]
            if self.proc.poll() is not None:
                self.read()
                if self.done(item.nodeid):
                    return self.reports[item.nodeid]
                return self.reports.get(item.nodeid, []) + [self.missing(item)]
            time.sleep(0.2)

    def read(self) -> None:
        with open(self.folder / "reports.jsonl", "rb") as f:
            f.seek(self.offset)
            chunk = f.read()
        end = chunk.rfind(b"\n")
        if end < 0:
            return
        self.offset += end + 1
        for line in chunk[: end + 1].decode("utf-8").splitlines():
            data = json.loads(line)
            report = self.config.hook.pytest_report_from_serializable(config=self.config, data=data)
            report.location = tuple(report.location)
            if isinstance(report.longrepr, list):  # a skip's (path, line, reason), a list through JSON
                report.longrepr = tuple(report.longrepr)
            self.reports.setdefault(report.nodeid, []).append(report)

    def missing(self, item):
        from _pytest.reports import TestReport

        tail = (self.folder / "worker.log").read_text(errors="replace")[-3000:]
        text = (f"the testbed worker (exit status {self.proc.returncode}) did not report this test; "
                f"the end of {self.folder / 'worker.log'}:\n{tail}")
        return TestReport(item.nodeid, item.location, {k: 1 for k in item.keywords}, "failed", text, "call")

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session):
        """Wait for the worker's clean-up (its testbeds' teardown); stop it first if this session
        ended before the worker's tests (Ctrl-C, -x, an internal error)."""
        if self.proc is None:
            return
        try:
            self.read()
            if not all(self.done(i.nodeid) for i in self.remote if i.nodeid not in self.ran_here):
                self.stop()
            else:
                self.proc.wait(STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            self.stop()
        except KeyboardInterrupt:
            self.stop()
            raise
        rc = self.proc.returncode
        if rc not in (0, 1, 5) and session.exitstatus == 0:  # interrupted, internal or usage error: not a pass
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
            tr = session.config.pluginmanager.get_plugin("terminalreporter")
            if tr is not None:
                tr.write_line(f"the testbed worker exited with status {rc}: see {self.folder / 'worker.log'}", red=True)

    def pytest_unconfigure(self):
        if self.proc is not None and self.proc.poll() is None:
            self.stop()

    def stop(self) -> None:
        """SIGINT: pytest's Ctrl-C path, which tears the worker's testbeds down; then harder."""
        for sig, wait in ((signal.SIGINT, STOP_WAIT_S), (signal.SIGTERM, 10), (signal.SIGKILL, 10)):
            if self.proc.poll() is not None:
                return
            if sig != signal.SIGINT or not self.interrupted:  # one SIGINT only: a second cuts its clean-up short
                self.proc.send_signal(sig)
                self.interrupted = True
            try:
                self.proc.wait(wait)
            except subprocess.TimeoutExpired:
                continue


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def _stop_with_parent() -> None:
    """In the worker, before exec: SIGINT when the main process dies (killed, not Ctrl-C), so an
    orphaned worker does not go on using the host; it cleans up as after Ctrl-C."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGINT)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
