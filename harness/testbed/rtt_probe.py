"""Round-trip times measured with TCP handshakes, for clusters harness did not build (no SSH, no
ping playbook): the time from a SYN to the peer's answer, SYN-ACK or RST alike, is one round trip.

Run in a pod on each node of an existing cluster (``python -m harness.testbed.rtt_probe``, the
cell image has harness), and from the machine harness runs on; the standard library only.
"""

from __future__ import annotations

import argparse
import errno
import json
import socket
import statistics
import time

ANSWERED = (errno.ECONNREFUSED, errno.ECONNRESET)  # an RST came back: the round trip happened


def tcp_rtt_ms(address: str, port: int, count: int = 5, timeout_s: float = 1.0) -> float | None:
    """The median of ``count`` handshakes to ``address:port``, in ms; None when nothing answered."""
    times = []
    for _ in range(count):
        s = socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(timeout_s)
        t = time.perf_counter()
        try:
            s.connect((address, port))
            times.append((time.perf_counter() - t) * 1000)
        except OSError as exc:
            if exc.errno in ANSWERED:
                times.append((time.perf_counter() - t) * 1000)
        finally:
            s.close()
    return round(statistics.median(times), 3) if times else None


def measure(peers: dict[str, str], port: int, count: int = 5, timeout_s: float = 1.0) -> dict[str, float | None]:
    return {name: tcp_rtt_ms(address, port, count, timeout_s) for name, address in peers.items()}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="TCP-handshake RTTs to peers; one JSON line on stdout.")
    ap.add_argument("--from", dest="source", required=True, help="this node's name")
    ap.add_argument("--port", type=int, default=10250, help="a port every peer answers on (the kubelet's)")
    ap.add_argument("--count", type=int, default=5)
    ap.add_argument("peers", nargs="*", help="name=address")
    args = ap.parse_args(argv)
    peers = dict(p.split("=", 1) for p in args.peers)
    print(json.dumps({"from": args.source, "rtt_ms": measure(peers, args.port, args.count)}), flush=True)


if __name__ == "__main__":
    main()
