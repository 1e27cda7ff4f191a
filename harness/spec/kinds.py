"""What kind of harness (or μBench) file a document is, from its shape: so that ``harness
validate`` checks each file against its own format instead of reading everything as an app."""

from __future__ import annotations

from typing import Any

KINDS = ("app", "scenario", "inventory", "profile", "runner-workload")


def kind_of(doc: Any) -> str:
    """One of KINDS. A list of {time, service} is a μBench Runner workload file; a mapping with
    node types and nodes is an inventory, with them and per-service timings a profile; one with a
    duration and an app a scenario; anything else is read as an app (a μBench workmodel)."""
    if isinstance(doc, list) and doc and all(isinstance(e, dict) and {"time", "service"} <= set(e) for e in doc[:50]):
        return "runner-workload"
    if not isinstance(doc, dict):
        return "app"
    keys = set(doc)
    if {"node_types", "nodes", "services", "rtt_ms"} <= keys:
        return "profile"
    if {"node_types", "nodes"} <= keys:
        return "inventory"
    if "duration_s" in keys and ("app" in keys or "load" in keys):
        return "scenario"
    return "app"
