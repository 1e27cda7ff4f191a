"""What the latency injector costs: HTTP echo requests/s between two nodes with 0 ms configured,
through the injector vs with the injector's rule removed, measured alternately in one run.

Builds its own two-node testbed (unique prefix), runs the echo server in one node and a
closed-loop client in the other, and tears everything down at the end, also on failure.

    sudo .venv/bin/python -m benchmarks.injector_cost [--seconds 5] [--rounds 3] [--connections 8]
"""

from __future__ import annotations

import argparse
import json
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

from harness.spec.inventory import load_inventory
from harness.testbed.local import linkemu
from harness.testbed.local.provision import provision
from harness.testbed.local.sh import in_netns, run
from harness.testbed.local.teardown import teardown
from harness.testbed.open import open_cluster

ECHO = str(Path(__file__).with_name("http_echo.py"))
PORT = 18080


def injector_rule(layout, present: bool) -> None:
    """Add or delete the NFQUEUE rule (netem: the qdisc tree) between the nodes."""
    args = linkemu.nfqueue_rule(layout)
    run(in_netns(layout.hub_netns, ["iptables", "-w", "-A" if present else "-D", linkemu.CHAIN, *args]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--connections", type=int, default=8)
    ap.add_argument("--json", type=Path, help="also write the numbers here")
    args = ap.parse_args()

    inv = load_inventory().model_copy(deep=True)
    inv.nodes = [n for n in inv.nodes if n.type == "cloud-a"]
    inv.rtt_ms["cloud-cloud"] = 0.0
    inv.local.prefix, inv.local.subnet = "b" + secrets.token_hex(2), f"10.{200 + secrets.randbelow(40)}.0.0/16"
    state_dir = Path(tempfile.mkdtemp()) / ".harness"
    try:
        state, _ = provision(inv, state_dir)
        if state.latency_injector != "nfqueue":
            print(f"latency injector here is {state.latency_injector}; this benchmark measures the NFQUEUE delayer")
        cluster = open_cluster(state_dir)
        server_node, client_node = (n.name for n in state.nodes)
        server = cluster.start_process(server_node, [sys.executable, ECHO, "serve", str(PORT)])
        time.sleep(1.0)
        target = cluster.node(server_node).address
        results: dict[str, list[dict]] = {"with_injector": [], "without_injector": []}
        for r in range(args.rounds):
            for mode in ("with_injector", "without_injector"):
                present = mode == "with_injector"
                if not present:
                    injector_rule(cluster.layout, False)
                try:
                    out = cluster.run_in_node(client_node, [sys.executable, ECHO, "load", target, str(PORT),
                                                            str(args.seconds), str(args.connections)],
                                              timeout=args.seconds + 30)
                finally:
                    if not present:
                        injector_rule(cluster.layout, True)
                res = json.loads(out.stdout)
                results[mode].append(res)
                print(f"round {r + 1} {mode:17s} {res['rps']:8.0f} req/s  p50 {res['p50_ms']:.3f} ms  p99 {res['p99_ms']:.3f} ms")
        server.kill()
        med = {m: statistics.median(x["rps"] for x in v) for m, v in results.items()}
        p50 = {m: statistics.median(x["p50_ms"] for x in v) for m, v in results.items()}
        ratio = med["with_injector"] / med["without_injector"]
        print(f"\nmedian req/s with injector {med['with_injector']:.0f}, without {med['without_injector']:.0f}: "
              f"ratio {ratio:.3f} ({(1 - ratio) * 100:.1f}% fewer requests/s through the injector)")
        print(f"median p50 latency with {p50['with_injector']:.3f} ms, without {p50['without_injector']:.3f} ms")
        if args.json:
            args.json.write_text(json.dumps({"rounds": results, "median_rps": med, "ratio": ratio,
                                             "median_p50_ms": p50, "injector": state.latency_injector}, indent=1))
    finally:
        teardown(inv.local.prefix, state_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
