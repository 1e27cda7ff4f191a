"""Provisioning: Ansible playbooks run through ansible-runner, with live progress."""
