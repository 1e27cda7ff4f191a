"""The event catalogue is enforced: every event a run writes goes through ``harness.events.checked``
(a kind or field the catalogue does not declare raises), and every place in harness that writes an
event with a literal kind names a declared kind and declared fields — checked on the source, so a
code path no test runs is held to the catalogue too."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from harness import events, faults
from harness.results.rundir import RunDir
from tests.conftest import REPO

WRITERS = {"event", "on_event"}  # RunDir.event, LiveRun.event, the move loop's and the service's on_event


def undeclared(source: str, where: str) -> list[str]:
    """Every event written in ``source`` with a literal kind whose kind, or one of whose keyword
    fields, the catalogue does not declare."""
    problems = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
        first = node.args[0]
        if name not in WRITERS or not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
            continue
        kind = events.get(first.value)
        if kind is None:
            problems.append(f"{where}:{node.lineno}: undeclared event kind {first.value!r}")
            continue
        extra = sorted(k.arg for k in node.keywords if k.arg not in (None, "t") and k.arg not in kind.fields)
        if extra:
            problems.append(f"{where}:{node.lineno}: event {first.value!r} writes undeclared field(s) {extra}")
    return problems


def test_every_event_harness_writes_is_declared_with_its_fields():
    faults.load_all()
    problems = []
    for f in sorted((REPO / "harness").rglob("*.py")):
        problems += undeclared(f.read_text(), str(f.relative_to(REPO)))
    assert not problems, "\n".join(problems)


def test_the_source_check_catches_an_undeclared_kind_and_field():
    code = 'out.event("deploy", placement={}, colour="red")\non_event("made-up", x=1)\nself.event("move", pod="p")\n'
    problems = undeclared(code, "x.py")
    assert problems == ["x.py:1: event 'deploy' writes undeclared field(s) ['colour']",
                        "x.py:2: undeclared event kind 'made-up'"]


def test_a_run_directory_refuses_an_undeclared_kind_or_field(tmp_path: Path):
    out = RunDir(tmp_path / "run")
    with pytest.raises(events.UndeclaredEvent, match="undeclared event kind 'made-up'"):
        out.event("made-up")
    with pytest.raises(events.UndeclaredEvent, match="'load-start' declares no field"):
        out.event("load-start", mode="closed")
    out.event("load-start", loads=[{"mode": "closed"}])
    out.event("node-failure", nodes=["n1"])  # a fault kind's event: the plug-ins are loaded on demand
    assert [e["kind"] for e in out.events] == ["load-start", "node-failure"]
