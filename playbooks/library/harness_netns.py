#!/usr/bin/python
"""Ansible module: the hub namespace, or one node's namespace with its link, address and routes."""

DOCUMENTATION = r"""
module: harness_netns
short_description: Ensure the local testbed's hub or one node's network namespace (idempotent)
options:
  layout: {description: the testbed layout computed by harness, required: true, type: dict}
  node: {description: node name; omit for the hub, type: str}
"""

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(argument_spec={"layout": {"type": "dict", "required": True}, "node": {"type": "str"}})
    from harness.errors import TestbedError
    from harness.testbed.local import network
    from harness.testbed.local.layout import Layout

    layout = Layout.from_dict(module.params["layout"])
    try:
        if module.params["node"]:
            node = layout.node(module.params["node"])
            changed = network.ensure_node(layout, node)
            module.exit_json(changed=changed, netns=node.netns, address=node.address)
        changed = network.ensure_hub(layout)
        module.exit_json(changed=changed, netns=layout.hub_netns)
    except TestbedError as exc:
        module.fail_json(msg=str(exc))


if __name__ == "__main__":
    main()
