#!/usr/bin/python
"""Ansible module: one node's cgroup with its CPU bandwidth (relative speed) and memory cap."""

DOCUMENTATION = r"""
module: harness_cgroup
short_description: Ensure a node's cgroup caps (idempotent; cgroup v1 or v2)
options:
  layout: {description: the testbed layout computed by harness, required: true, type: dict}
  node: {description: node name, required: true, type: str}
"""

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(argument_spec={"layout": {"type": "dict", "required": True},
                                          "node": {"type": "str", "required": True}})
    from harness.errors import TestbedError
    from harness.testbed.local import cgroups
    from harness.testbed.local.layout import Layout

    layout = Layout.from_dict(module.params["layout"])
    node = layout.node(module.params["node"])
    rel = f"{layout.cgroup}/{node.name}"
    try:
        changed = cgroups.ensure(rel, node.cpu_quota_us, node.cpu_period_us, node.memory_bytes)
    except TestbedError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(changed=changed, cgroup=rel, cpus=round(node.cpu_quota_us / node.cpu_period_us, 3))


if __name__ == "__main__":
    main()
