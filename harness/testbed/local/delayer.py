"""User-space latency injector for kernels without ``sch_netem``.

Runs in the hub namespace. iptables sends every forwarded node-to-node packet to NFQUEUE;
this process reads the packet's IPv4 source and destination, holds the packet for the pair's
one-way delay and then accepts it. The kernel keeps the packet; we copy only the 20-byte IP
header. SIGHUP reloads the delay table (``set_latency`` while running); SIGTERM accepts every
held packet and exits.

    python -m harness.testbed.local.delayer --table delays.json [--queue 0] [--ready FILE]
"""

from __future__ import annotations

import argparse
import heapq
import itertools
import json
import signal
import socket
import sys
import threading
import time
from pathlib import Path

import fnfqueue

IP_HEADER = 20


def load_table(path: Path) -> dict[bytes, float]:
    """'src dst' -> ms becomes packed(src)+packed(dst) -> seconds, the lookup key of the hot path."""
    raw = json.loads(path.read_text())["one_way_ms"]
    out = {}
    for pair, ms in raw.items():
        src, dst = pair.split()
        out[socket.inet_aton(src) + socket.inet_aton(dst)] = ms / 1000.0
    return out


RECEIVE_BUFFER = 16 << 20  # bytes: room for a burst of queued packets' messages (the default is ~200 KB)


def _bigger_receive_buffer(conn) -> None:
    """Raise the netlink socket's receive buffer (fnfqueue has no call for it: its descriptor,
    duplicated). Without root's SO_RCVBUFFORCE the default stays; overflows are then reset."""
    try:
        s = socket.fromfd(conn._conn.fd, socket.AF_NETLINK, socket.SOCK_RAW)
        try:
            s.setsockopt(socket.SOL_SOCKET, 33, RECEIVE_BUFFER)  # SO_RCVBUFFORCE
        finally:
            s.close()
    except (OSError, AttributeError):
        pass


class Delayer:
    def __init__(self, table: dict[bytes, float], queue: int, maxlen: int = 100_000):
        self.table = table
        self.heap: list[tuple[float, int, fnfqueue.Packet]] = []
        self.cond = threading.Condition()
        self.seq = itertools.count()
        self.running = True
        self.stats = {"packets": 0, "delayed": 0}
        self.conn = fnfqueue.Connection(alloc_size=256, chunk_size=32, packet_size=1024)
        q = self.conn.bind(queue)
        q.set_mode(IP_HEADER, fnfqueue.COPY_PACKET)
        q.set_maxlen(maxlen)
        _bigger_receive_buffer(self.conn)

    def receive_loop(self) -> None:
        # A verdict on a packet the kernel already dropped (its device went down: a node
        # failure) comes back as an ENOENT error out of the iterator; that packet is gone, the
        # queue is fine, so count it and keep receiving. A burst that overflows the netlink
        # socket's buffer (ENOBUFS) loses the messages that did not fit, and fnfqueue then raises
        # BufferOverflowException on every call until reset: reset, or every node-to-node packet
        # is black-holed from then on (it was, once: 24 million errors in a minute). Any other
        # error is logged too.
        while self.running:
            try:
                self._receive()
                return  # the connection was closed
            except Exception as exc:  # noqa: BLE001
                if not self.running:
                    return
                if isinstance(exc, fnfqueue.BufferOverflowException):
                    self.conn.reset()
                    self.stats["overflows"] = self.stats.get("overflows", 0) + 1
                self.stats["errors"] = self.stats.get("errors", 0) + 1
                if self.stats["errors"] <= 10 or self.stats["errors"] % 1000 == 0:
                    print(f"delayer: receive error #{self.stats['errors']} (continuing): {exc!r}", file=sys.stderr, flush=True)

    def _receive(self) -> None:
        heap, cond, seq, stats = self.heap, self.cond, self.seq, self.stats
        now = time.monotonic
        for pkt in self.conn:
            stats["packets"] += 1
            head = pkt.payload
            delay = self.table.get(head[12:20], 0.0) if head[0] >> 4 == 4 else 0.0
            if delay <= 0.0:
                pkt.accept()
                continue
            stats["delayed"] += 1
            item = (now() + delay, next(seq), pkt)
            with cond:
                heapq.heappush(heap, item)
                if heap[0] is item:
                    cond.notify()

    def release_loop(self) -> None:
        heap, cond = self.heap, self.cond
        now = time.monotonic
        while True:
            with cond:
                while self.running and (not heap or heap[0][0] > now()):
                    cond.wait(None if not heap else heap[0][0] - now())
                if not self.running:
                    return
                t = now()
                due = []
                while heap and heap[0][0] <= t:
                    due.append(heapq.heappop(heap)[2])
            for pkt in due:
                try:
                    pkt.accept()
                except Exception as exc:  # noqa: BLE001 - one bad verdict must not stop the releases
                    print(f"delayer: accept failed: {exc!r}", file=sys.stderr, flush=True)

    def stop(self) -> None:
        with self.cond:
            self.running = False
            held = [item[2] for item in self.heap]
            self.heap.clear()
            self.cond.notify_all()
        for pkt in held:
            pkt.accept()
        self.conn.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--table", type=Path, required=True, help="JSON {'one_way_ms': {'src dst': ms}}")
    ap.add_argument("--queue", type=int, default=0)
    ap.add_argument("--ready", type=Path, help="file to create once the queue is bound")
    args = ap.parse_args(argv)

    # Threads inherit the mask: only the main thread's sigwait sees these signals.
    signals = {signal.SIGHUP, signal.SIGTERM, signal.SIGINT}
    signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    d = Delayer(load_table(args.table), args.queue)
    threading.Thread(target=d.receive_loop, name="receive", daemon=True).start()
    threading.Thread(target=d.release_loop, name="release", daemon=True).start()
    if args.ready:
        args.ready.write_text("ready\n")
    print(f"delayer: bound to queue {args.queue}, {len(d.table)} delayed pairs", flush=True)
    while True:
        sig = signal.sigwait(signals)
        if sig == signal.SIGHUP:
            try:
                d.table = load_table(args.table)
                print(f"delayer: reloaded {len(d.table)} pairs", flush=True)
            except (OSError, ValueError, KeyError) as exc:
                print(f"delayer: keeping old table, cannot reload {args.table}: {exc}", file=sys.stderr, flush=True)
            continue
        d.stop()
        print(f"delayer: stopped after {d.stats['packets']} packets ({d.stats['delayed']} delayed)", flush=True)
        return 0


if __name__ == "__main__":
    sys.exit(main())
