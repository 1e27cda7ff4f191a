#!/usr/bin/python
"""Ansible module: check the host can run the local testbed and choose the latency injector."""

DOCUMENTATION = r"""
module: harness_preflight
short_description: Check root, tools and cgroups; probe for sch_netem and pick netem or nfqueue
options:
  prefix: {description: testbed name prefix (for the scratch probe namespace), required: true, type: str}
  latency_injector: {description: auto, netem or nfqueue, default: auto, type: str}
"""

import os
import shutil

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(
        argument_spec={"prefix": {"type": "str", "required": True},
                       "latency_injector": {"type": "str", "default": "auto", "choices": ["auto", "netem", "nfqueue"]}},
        supports_check_mode=True,
    )
    from harness.errors import TestbedError
    from harness.testbed.local import cgroups, linkemu

    if os.geteuid() != 0:
        module.fail_json(msg="the local testbed needs root (network namespaces, cgroups, iptables)")
    missing = [t for t in ("ip", "tc", "iptables", "ping", "sysctl") if shutil.which(t) is None]
    if missing:
        module.fail_json(msg=f"missing host commands: {', '.join(missing)} (apt-get install iproute2 iptables iputils-ping procps)")
    layout = "v2" if cgroups.is_v2() else "v1"
    if layout == "v1" and not (cgroups.ROOT / "cpu").is_dir():
        module.fail_json(msg="no cgroup cpu controller under /sys/fs/cgroup")
    try:
        injector, reason = linkemu.choose_injector(module.params["latency_injector"], module.params["prefix"])
    except TestbedError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(changed=False, injector=injector, reason=reason, cgroup_version=layout)


if __name__ == "__main__":
    main()
