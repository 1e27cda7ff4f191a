"""The latency injector's receive loop survives what the kernel throws at it."""

from __future__ import annotations

import threading

import fnfqueue

from harness.testbed.local.delayer import Delayer


class OverflowedConnection:
    """A stand-in for fnfqueue's Connection after a netlink buffer overflow: every read raises
    BufferOverflowException until ``reset`` (as fnfqueue documents), then the packets flow."""

    def __init__(self, packets):
        self.packets, self.overflowed, self.resets = packets, True, 0

    def reset(self):
        self.overflowed, self.resets = False, self.resets + 1

    def __iter__(self):
        if self.overflowed:
            raise fnfqueue.BufferOverflowException()
        yield from self.packets  # then the connection closes


class Packet:
    payload = bytes([0x45]) + bytes(19)  # IPv4, a pair with no delay: accepted at once
    accepted = False

    def accept(self):
        self.accepted = True


def test_after_a_buffer_overflow_the_delayer_resets_and_goes_on_accepting_packets():
    d = Delayer.__new__(Delayer)  # no real queue: the loop alone
    d.table, d.heap, d.cond, d.running, d.stats = {}, [], threading.Condition(), True, {"packets": 0, "delayed": 0}
    d.seq = iter(range(10))
    packets = [Packet(), Packet()]
    d.conn = OverflowedConnection(packets)
    loop = threading.Thread(target=d.receive_loop, daemon=True)
    loop.start()
    loop.join(5)
    alive = loop.is_alive()
    d.running = False
    assert not alive, "the receive loop spins on the overflow"
    assert d.conn.resets == 1 and d.stats["overflows"] == 1
    assert all(p.accepted for p in packets) and d.stats["packets"] == 2
