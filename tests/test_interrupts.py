"""SIGTERM and SIGHUP take Ctrl-C's path (KeyboardInterrupt in the main thread), and a block that
holds Ctrl-C back holds them back too."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

PROGRAM = """
import os, signal, threading, time
from harness.interrupts import polite_signals, sigint_sets
polite_signals()
flag = threading.Event()
with sigint_sets(flag):
    os.kill(os.getpid(), signal.{sig})
    time.sleep(0.2)
print("held" if flag.is_set() else "not held", flush=True)
try:
    os.kill(os.getpid(), signal.{sig})
    time.sleep(5)
    print("slept through it")
except KeyboardInterrupt:
    print("interrupted")
"""


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP", "SIGINT"])
def test_polite_signals_interrupt_and_are_held_back_where_ctrl_c_is(sig):
    # a suite started in the background by a script inherits SIGINT ignored (POSIX shells do so
    # for `cmd &`), and Python keeps it so: the program starts with Ctrl-C's default, as in a terminal
    r = subprocess.run([sys.executable, "-c", PROGRAM.format(sig=sig)], capture_output=True, text=True, timeout=30,
                       preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert r.stdout.split() == ["held", "interrupted"], r.stderr
