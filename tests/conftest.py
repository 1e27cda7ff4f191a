"""Shared fixtures. Root tests build real testbeds under a unique prefix and subnet, so they never
touch a user's testbed, and always tear them down, also when a test fails."""

from __future__ import annotations

import os
import secrets
import signal
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.spec.inventory import Inventory, load_inventory

REPO = Path(__file__).resolve().parents[1]

# Started as a script's background job (`pytest &`), the suite inherits SIGINT ignored, and so would
# every harness it starts: its Ctrl-C tests would send a signal nobody hears. A handler (not an
# ignore) is reset to the default at exec, so each child starts with Ctrl-C's default, as in a
# terminal (the testbed worker does the same for itself).
signal.signal(signal.SIGINT, signal.default_int_handler)

# the tests' testbeds are not the user's "last provisioned" (harness.spec.testbed_state.last_state_file)
os.environ["XDG_STATE_HOME"] = str(Path(__import__("tempfile").mkdtemp(prefix="harness-tests-state-")))


_PREFIXES: list[str] = []
SIDE_ENV = "HARNESS_TESTS_SIDE"  # set to worker in the testbed worker (tests/testbed_worker.py)


def unique_prefix() -> str:
    prefix = "t" + secrets.token_hex(2)  # 5 chars: fits the 6-char prefix limit
    _PREFIXES.append(prefix)
    return prefix


def pytest_sessionfinish(session, exitstatus):
    """Safety net: whatever a test did, every testbed prefix handed out in this session goes."""
    if os.geteuid() != 0 or not _PREFIXES:
        return
    from harness.testbed.local.teardown import find, teardown

    for prefix in _PREFIXES:
        if not find(prefix, Path("/nonexistent")).empty():
            teardown(prefix, Path("/nonexistent"))


def unique_subnet() -> str:
    """A /16 no testbed on this host routes now. Testbeds live at once (a session's, a test's own,
    the testbed worker's: tests/testbed_worker.py) and a second route to one /16 would take the
    first's traffic; the worker draws from its own half, so two processes never race for one."""
    import subprocess

    lo = 220 if os.environ.get(SIDE_ENV) == "worker" else 200
    routes = subprocess.run(["ip", "route", "show"], capture_output=True, text=True).stdout
    free = [x for x in range(lo, lo + 20) if f"10.{x}." not in routes]
    return f"10.{secrets.choice(free or list(range(lo, lo + 20)))}.0.0/16"


def test_inventory(base: Inventory | None = None) -> Inventory:
    inv = (base or load_inventory()).model_copy(deep=True)
    inv.local.prefix = unique_prefix()
    inv.local.subnet = unique_subnet()
    inv.local.prometheus_port = 19100 + secrets.randbelow(800)
    return inv


test_inventory.__test__ = False  # a helper, not a test


@pytest.fixture(scope="session")
def as_root():
    if os.geteuid() != 0:
        pytest.skip("needs root: creates network namespaces, cgroups and iptables rules")


@dataclass
class Testbed:
    inventory: Inventory
    state_dir: Path
    cluster: object
    first_run: object  # PlaybookResult of the provisioning run


def small_inventory(n_edge: int = 1) -> Inventory:
    """One cloud node, ``n_edge`` edge nodes: the cheapest testbed that still has a 50 ms link."""
    inv = test_inventory()
    inv.nodes = [n for n in inv.nodes if n.type == "cloud-a"][:1] + [n for n in inv.nodes if n.type == "edge-a"][:n_edge]
    return inv


@pytest.fixture(scope="session")
def make_testbed(as_root, tmp_path_factory):
    """Provision testbeds through the real playbook; every one is torn down at the end of the
    session, whether the tests using it passed, failed or crashed half-way."""
    from harness.testbed.local.provision import provision
    from harness.testbed.local.teardown import find, teardown
    from harness.testbed.open import open_cluster

    built: list[tuple[str, Path]] = []

    def make(inv: Inventory) -> Testbed:
        state_dir = tmp_path_factory.mktemp("testbed") / ".harness"
        built.append((inv.local.prefix, state_dir))  # before provisioning: a half-built one is cleaned too
        _, result = provision(inv, state_dir)
        return Testbed(inv, state_dir, open_cluster(state_dir), result)

    try:
        yield make
    finally:
        problems = []
        for prefix, state_dir in built:
            teardown(prefix, state_dir)
            left = find(prefix, state_dir)
            if not left.empty():
                problems.append(f"{prefix}: {left.describe()}")
        assert not problems, f"teardown left {problems}"


@pytest.fixture(scope="session")
def local_testbed(make_testbed):
    """REACH's default testbed, provisioned once per session."""
    return make_testbed(test_inventory())


def pytest_configure(config):
    from tests.testbed_worker import register

    register(config)  # the root tests in a second process, beside the others (tests/testbed_worker.py)
