#!/usr/bin/python
"""Ansible module: inter-node latency on the hub, by tc netem or by the NFQUEUE delayer daemon."""

DOCUMENTATION = r"""
module: harness_latency
short_description: Apply the configured RTT matrix (idempotent)
options:
  layout: {description: the testbed layout computed by harness, required: true, type: dict}
  rtt_ms: {description: node -> node -> round-trip ms, required: true, type: dict}
  bandwidth_mbit: {description: node -> node -> Mbit/s for the pairs a link limits (netem only), required: false, type: dict, default: {}}
  injector: {description: netem or nfqueue (from harness_preflight), required: true, type: str}
  state_dir: {description: harness state directory (pidfiles, delay table, logs), required: true, type: path}
  python: {description: interpreter that runs the delayer, required: true, type: path}
"""

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(argument_spec={
        "layout": {"type": "dict", "required": True},
        "rtt_ms": {"type": "dict", "required": True},
        "bandwidth_mbit": {"type": "dict", "required": False, "default": {}},
        "injector": {"type": "str", "required": True, "choices": ["netem", "nfqueue"]},
        "state_dir": {"type": "path", "required": True},
        "python": {"type": "path", "required": True},
    })
    from pathlib import Path

    from harness.errors import TestbedError
    from harness.testbed.local import daemons, linkemu
    from harness.testbed.local.backend import DELAYER, delay_table_path
    from harness.testbed.local.layout import Layout
    from harness.testbed.local.teardown import run_dir

    layout = Layout.from_dict(module.params["layout"])
    rtt = {a: {b: float(v) for b, v in row.items()} for a, row in module.params["rtt_ms"].items()}
    state_dir = Path(module.params["state_dir"])
    try:
        if module.params["injector"] == "netem":
            bandwidth = {a: {b: float(v) for b, v in row.items()} for a, row in module.params["bandwidth_mbit"].items()}
            changed = linkemu.apply_netem(layout, rtt, bandwidth)
            module.exit_json(changed=changed, injector="netem")
        rd = run_dir(state_dir)
        rd.mkdir(parents=True, exist_ok=True)
        table = delay_table_path(state_dir)
        changed = linkemu.write_delay_table(table, layout, rtt)
        pidfile = rd / f"{DELAYER}.pid"
        if changed and daemons.read_pid(pidfile) is not None:
            linkemu.reload_delayer(pidfile)
        changed |= daemons.start(
            ["ip", "netns", "exec", layout.hub_netns, module.params["python"], "-m", "harness.testbed.local.delayer",
             "--table", str(table), "--ready", str(rd / f"{DELAYER}.ready")],
            pidfile=pidfile, logfile=rd / f"{DELAYER}.log", ready_file=rd / f"{DELAYER}.ready")
        changed |= linkemu.ensure_nfqueue_rules(layout)
        module.exit_json(changed=changed, injector="nfqueue", pid=daemons.read_pid(pidfile))
    except TestbedError as exc:
        module.fail_json(msg=str(exc))


if __name__ == "__main__":
    main()
