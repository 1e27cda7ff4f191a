"""The embedded local testbed: network namespaces, cgroups and latency injection on one Linux host.

Topology: every node is a network namespace with one veth link to a hub namespace that routes
between nodes (a star, like a switch with a router). The root namespace reaches the nodes
through the hub too, so the harness and Prometheus can talk to pods. Inter-node latency is
added on the hub, where every node-to-node packet passes once: by ``tc netem`` where the
kernel has it, else by a user-space NFQUEUE delayer.
"""
