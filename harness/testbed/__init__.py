"""Testbeds behind one Cluster interface (cluster.py): the embedded local one (local/) and K3s (kube/),
chosen by name in backends.py; pods and make-before-break moves written once against it (pods.py)."""
