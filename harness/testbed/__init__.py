"""Testbeds behind one Cluster interface: the embedded local one and (later) K3s."""
