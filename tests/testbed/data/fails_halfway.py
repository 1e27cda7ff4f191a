"""Run only by test_teardown.py, in a child pytest: provisions a testbed, then fails half-way.

The prefix comes from $HARNESS_TEST_PREFIX so the parent test can look for leftovers."""

import os
import subprocess


def sleep_seconds(prefix: str) -> str:
    """A sleep argument unique to this run, so the parent finds this process and no other."""
    return f"120.{int(prefix[1:], 16)}"


def test_fails_after_provisioning(make_testbed):
    from tests.conftest import small_inventory

    inv = small_inventory()
    inv.local.prefix = os.environ["HARNESS_TEST_PREFIX"]
    tb = make_testbed(inv)
    tb.cluster.start_process("edge-a-1", ["sleep", sleep_seconds(inv.local.prefix)])  # must not survive either
    assert subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.count(inv.local.prefix) == 3
    raise AssertionError("deliberate failure half-way through a test")
