"""The K3s backend: real VMs (OpenStack) or SSH hosts, provisioned by playbooks, driven through
the Kubernetes API with the official client."""
