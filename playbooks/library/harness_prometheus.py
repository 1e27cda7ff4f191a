#!/usr/bin/python
"""Ansible module: the testbed's Prometheus, scraping every pod through a file_sd target list."""

DOCUMENTATION = r"""
module: harness_prometheus
short_description: Configure and start Prometheus for the local testbed (idempotent)
options:
  state_dir: {description: harness state directory, required: true, type: path}
  port: {description: listen on 127.0.0.1:<port>, required: true, type: int}
"""

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(argument_spec={"state_dir": {"type": "path", "required": True},
                                          "port": {"type": "int", "required": True}})
    from pathlib import Path

    from harness.errors import TestbedError
    from harness.testbed.local import monitoring
    from harness.testbed.local.teardown import run_dir

    try:
        changed = monitoring.ensure(run_dir(Path(module.params["state_dir"])), module.params["port"])
    except TestbedError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(changed=changed, url=monitoring.url(module.params["port"]))


if __name__ == "__main__":
    main()
