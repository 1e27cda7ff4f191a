"""Run only by tests/test_testbed_worker.py, in a child pytest: root tests (here only marked so,
they touch nothing) beside the others, one of each outcome on each side."""

import pytest


@pytest.fixture
def where(pytestconfig) -> str:
    return "worker" if pytestconfig.pluginmanager.has_plugin("harness-testbed-worker") else "main"


def test_here_passes(where):
    print("ran in", where)


def test_here_fails(where):
    assert where == "elsewhere"


@pytest.mark.root
def test_root_passes(where):
    print("ran in", where)


@pytest.mark.root
def test_root_fails(where):
    assert {"ran in": where} == {"ran in": "nowhere"}


@pytest.mark.root
def test_root_skips(where):
    pytest.skip("skipped in " + where)


@pytest.fixture
def broken(where):
    raise RuntimeError("setup broke in " + where)


@pytest.mark.root
def test_root_setup_errors(broken):
    pass


@pytest.mark.root
@pytest.mark.load_tolerant
def test_root_tolerant_passes(where):
    print("ran in", where)
