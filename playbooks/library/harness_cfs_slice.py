#!/usr/bin/python
"""Ansible module: the kernel's CFS bandwidth slice the testbed runs with (host-wide)."""

DOCUMENTATION = r"""
module: harness_cfs_slice
short_description: Set kernel.sched_cfs_bandwidth_slice_us, keeping the host's value for teardown
options:
  layout: {description: the testbed layout computed by harness, required: true, type: dict}
  state_dir: {description: harness state directory (the host's value is kept in its run/), required: true, type: str}
"""

from pathlib import Path

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(argument_spec={"layout": {"type": "dict", "required": True},
                                          "state_dir": {"type": "str", "required": True}})
    from harness.errors import TestbedError
    from harness.testbed.local import cgroups
    from harness.testbed.local.layout import Layout
    from harness.testbed.local.teardown import run_dir

    us = Layout.from_dict(module.params["layout"]).bandwidth_slice_us
    if us is None:
        module.exit_json(changed=False, slice_us="the host's")
    try:
        changed = cgroups.set_bandwidth_slice(us, run_dir(Path(module.params["state_dir"])))
    except TestbedError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(changed=changed, slice_us=us)


if __name__ == "__main__":
    main()
