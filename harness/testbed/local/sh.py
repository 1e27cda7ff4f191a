"""Running host commands (ip, tc, iptables) with errors that say which command failed and why."""

from __future__ import annotations

import subprocess

from harness.errors import TestbedError


def run(argv: list[str], *, check: bool = True, input: str | None = None, timeout: float = 30) -> subprocess.CompletedProcess:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, input=input, timeout=timeout)
    except FileNotFoundError:
        raise TestbedError(f"command not found: {argv[0]} (install it: make setup, as root)") from None
    if check and proc.returncode != 0:
        raise TestbedError(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr.strip() or proc.stdout.strip()}")
    return proc


def ok(argv: list[str]) -> bool:
    """True when the command succeeds; for existence checks."""
    return run(argv, check=False).returncode == 0


def in_netns(netns: str, argv: list[str]) -> list[str]:
    return ["ip", "netns", "exec", netns, *argv]
