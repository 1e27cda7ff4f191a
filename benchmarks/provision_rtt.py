"""Provision an inventory on this machine, time it, and check every node pair's measured RTT
against its configured one (within 2 ms or 10 %, whichever is looser); then tear it down.

    .venv/bin/python -m benchmarks.provision_rtt [--inventory inventories/rollout-basic-local.yaml]

Needs root. Uses its own state directory, and the inventory's prefix and subnet: run it beside
a provisioned default testbed only with an inventory whose prefix differs (the samples' do).
Exits 1 if a pair is out of tolerance or unreachable.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from harness import shipped
from harness.spec.inventory import load_inventory
from harness.testbed.backends import backend

def within(configured: float, measured: float | None) -> bool:
    return measured is not None and abs(measured - configured) <= max(2.0, 0.10 * configured)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inventory", type=Path, default=shipped.find("inventories/rollout-basic-local.yaml"))
    args = ap.parse_args()
    inv = load_inventory(args.inventory)
    be = backend(inv.backend)
    state_dir = Path(tempfile.mkdtemp(prefix="harness-provision-rtt-")) / ".harness"
    t = time.monotonic()
    try:
        state, result = be.provision(inv, state_dir, None, True)
        took = time.monotonic() - t
        names = [n.name for n in state.nodes]
        pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
        bad = [(a, b, state.rtt_configured_ms[a][b], state.rtt_measured_ms[a][b]) for a, b in pairs
               if not within(state.rtt_configured_ms[a][b], state.rtt_measured_ms[a][b])]
        worst = max(abs(state.rtt_measured_ms[a][b] - state.rtt_configured_ms[a][b]) for a, b in pairs
                    if state.rtt_measured_ms[a][b] is not None)
        by_conf: dict[float, list[float]] = {}
        for a, b in pairs:
            if state.rtt_measured_ms[a][b] is not None:
                by_conf.setdefault(state.rtt_configured_ms[a][b], []).append(state.rtt_measured_ms[a][b])
        print(f"{inv.name}: {len(names)} nodes provisioned in {took:.1f} s (latency by {state.latency_injector}); "
              f"{len(pairs)} pairs measured")
        for conf, meas in sorted(by_conf.items()):
            print(f"  configured {conf:6.1f} ms: {len(meas):4d} pairs, measured {min(meas):7.2f} .. {max(meas):7.2f} ms")
        print(f"largest |measured - configured| {worst:.2f} ms; pairs out of tolerance (2 ms or 10 %): {len(bad)}")
        for a, b, c, m in bad[:10]:
            print(f"  {a} - {b}: configured {c} ms, measured {m}")
        return 1 if bad else 0
    finally:
        t = time.monotonic()
        print(be.teardown(None, inv, state_dir), f"({time.monotonic() - t:.1f} s)")


if __name__ == "__main__":
    sys.exit(main())
