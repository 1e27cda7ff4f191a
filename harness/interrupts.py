"""Ctrl-C at the moments it must not cut short: while a playbook winds down, while a run cleans up.

SIGTERM and SIGHUP (``timeout``, ``kill``, systemd, a CI job cancelled, a closed terminal) take
the same path as Ctrl-C: they raise KeyboardInterrupt in the main thread (``polite_signals``),
and every block below that holds Ctrl-C back holds them back too."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from typing import Iterator


POLITE = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


def polite_signals() -> None:
    """SIGTERM and SIGHUP raise KeyboardInterrupt, as Ctrl-C does (call from the main thread)."""
    for sig in POLITE:
        if sig != signal.SIGINT:
            signal.signal(sig, signal.default_int_handler)


def _handle(handler) -> dict:
    """Install ``handler`` for every polite signal; the handlers they had."""
    return {sig: signal.signal(sig, handler) for sig in POLITE}


def _restore(previous: dict) -> None:
    for sig, handler in previous.items():
        signal.signal(sig, handler)


@contextlib.contextmanager
def sigint_sets(flag: threading.Event) -> Iterator[None]:
    """While running, SIGINT (SIGTERM, SIGHUP) sets ``flag`` instead of raising (only the main
    thread can take signals)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = _handle(lambda signum, frame: flag.set())
    try:
        yield
    finally:
        _restore(previous)


@contextlib.contextmanager
def cleanup_shield(what: str = "cleaning up") -> Iterator[None]:
    """A clean-up no Ctrl-C can skip: presses during the block are noted (one line to say so) and
    raised as KeyboardInterrupt after it, unless an error already propagates."""
    flag = threading.Event()
    told = threading.Event()

    def note(signum, frame) -> None:
        flag.set()
        if not told.is_set():
            told.set()
            print(f"harness: {what}; it finishes first (a few seconds)", file=sys.stderr)

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = _handle(note)
    try:
        yield
    finally:
        _restore(previous)
    if flag.is_set():
        raise KeyboardInterrupt


def die_with_parent() -> None:
    """In a worker process (a pool's initializer): the kernel sends it SIGTERM when the process
    that started it dies, even by kill -9, so no worker outlives its pool's owner (Linux; a no-op
    elsewhere). SIGTERM ends the worker: it must not be taken as Ctrl-C there."""
    import ctypes
    import os

    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the parent died before the call: nobody would send it
        os._exit(1)


def deaf_worker() -> None:
    """A process pool's worker (its initializer): dies with its parent (``die_with_parent``) and is
    deaf to Ctrl-C, which a terminal sends to the whole process group. The parent alone decides,
    keeps what finished and kills the workers (``kill_pool``): a worker interrupted mid-task would
    pass for a failed task, or break the pool, and a second Ctrl-C could leave the pool hung."""
    die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def kill_pool(pool) -> None:
    """Every worker of a ``concurrent.futures.ProcessPoolExecutor`` killed and what is queued
    dropped: a task running cannot be stopped otherwise (``shutdown`` waits for it, and for the
    ones already handed to the workers' queue)."""
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        try:
            proc.kill()
        except Exception:
            pass  # already gone
    pool.shutdown(wait=True, cancel_futures=True)
