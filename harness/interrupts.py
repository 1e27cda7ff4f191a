"""Ctrl-C at the moments it must not cut short: while a playbook winds down, while a run cleans up."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from typing import Iterator


@contextlib.contextmanager
def sigint_sets(flag: threading.Event) -> Iterator[None]:
    """While running, SIGINT sets ``flag`` instead of raising (only the main thread can take signals)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, lambda signum, frame: flag.set())
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


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
    previous = signal.signal(signal.SIGINT, note)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if flag.is_set():
        raise KeyboardInterrupt
