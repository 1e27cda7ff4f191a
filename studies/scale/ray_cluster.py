"""A leaderboard played on a Ray cluster of two nodes, started as a user starts one on two machines,
against the same leaderboard in one process: the long tables must be the same, byte for byte.

    sudo .venv/bin/python -m studies.scale.ray_cluster [--file leaderboards/scale.yaml] [--seeds 3]
        [--out results/scale-ray] [--skip-pool]

The second machine is a network namespace of its own (``harness-ray-b``, joined to the host by a
veth pair on ``SUBNET``): its Ray node reaches the head only over that link, by address, as on
another machine. On each "machine", one CPU for Ray:

    head:    ray start --head --node-ip-address 10.243.0.1 --port 6390 --num-cpus 1
    node b:  ray start --address 10.243.0.1:6390 --node-ip-address 10.243.0.2 --num-cpus 1

then ``harness leaderboard FILE --ray 10.243.0.1:6390`` on the head, and ``harness leaderboard
FILE --jobs 1`` for the one-process table. Both nodes read the repository from the same disk (on
real machines: a checkout of the same commit on each). ``leaderboard.json`` of the Ray sweep says
how many cells each node played. Everything started here is stopped at the end, on Ctrl-C too.
Needs root (namespaces) and Ray (the leaderboard extra).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NETNS = "harness-ray-b"
VETH = ("hrb-host", "hrb-ns")  # the host's end, the namespace's end
SUBNET = "10.243.0"  # .1 the head, .2 node b
PORT = 6390
RAY = Path(sys.executable).with_name("ray")


def _ip(*args: str, netns: str | None = None) -> None:
    cmd = ["ip", *(["netns", "exec", netns, "ip"] if netns else []), *args]
    subprocess.run(cmd, check=True, capture_output=True, text=True)


def _remove_link(netns: str, veth: str) -> None:
    subprocess.run(["ip", "netns", "del", netns], capture_output=True)
    subprocess.run(["ip", "link", "del", veth], capture_output=True)


def _start_node(args: list[str], netns: str | None, temp_dir: Path, log: Path) -> subprocess.Popen:
    """``ray start ... --block`` in a process group of its own (its raylet and the rest inherit it)."""
    cmd = [str(RAY), "start", *args, "--num-cpus", "1", "--temp-dir", str(temp_dir), "--disable-usage-stats", "--block"]
    if netns:
        cmd = ["ip", "netns", "exec", netns, *cmd]
    env = dict(os.environ, RAY_AUTH_MODE="disabled")  # a private cluster on private addresses
    return subprocess.Popen(cmd, stdout=open(log, "w"), stderr=subprocess.STDOUT, env=env, start_new_session=True)


def _stop(proc: subprocess.Popen) -> None:
    """The node's whole process group: SIGTERM, then SIGKILL for what ignores it (the GCS does)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)


def _cpus_up(address: str) -> int:
    """The CPUs of the cluster's live nodes, as a driver sees them (0 while it cannot connect)."""
    code = ("import ray; ray.init(address=%r, log_to_driver=False, configure_logging=False); "
            "print(int(sum(n['Resources'].get('CPU', 0) for n in ray.nodes() if n['Alive'])))" % address)
    try:
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, RAY_AUTH_MODE="disabled"))
    except subprocess.TimeoutExpired:
        return 0
    return int(r.stdout.strip().splitlines()[-1]) if r.returncode == 0 and r.stdout.strip() else 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def two_nodes(work: Path, timeout_s: float = 180.0, subnet: str = SUBNET, port: int = PORT, netns: str = NETNS,
              veth: tuple[str, str] = VETH):
    """A Ray cluster of two nodes, the head on the host, node b in network namespace ``netns``
    (``subnet``.1 and .2 over the ``veth`` pair); yields the head's address once both are up;
    stops both and removes the link after."""
    if os.geteuid() != 0:
        raise SystemExit("studies.scale.ray_cluster: needs root (a network namespace for the second node)")
    _remove_link(netns, veth[0])  # a link left by a run killed with -9
    work.mkdir(parents=True, exist_ok=True)
    head_ip, b_ip = f"{subnet}.1", f"{subnet}.2"
    procs: list[subprocess.Popen] = []
    temps: list[str] = []

    def temp(who: str) -> Path:  # short: Ray's sockets live in it, and a socket's path has at most 107 bytes
        temps.append(tempfile.mkdtemp(prefix=f"hray-{who}-", dir="/tmp"))
        return Path(temps[-1])

    try:
        _ip("netns", "add", netns)
        _ip("link", "add", veth[0], "type", "veth", "peer", "name", veth[1])
        _ip("link", "set", veth[1], "netns", netns)
        _ip("addr", "add", f"{head_ip}/24", "dev", veth[0])
        _ip("link", "set", veth[0], "up")
        _ip("addr", "add", f"{b_ip}/24", "dev", veth[1], netns=netns)
        _ip("link", "set", veth[1], "up", netns=netns)
        _ip("link", "set", "lo", "up", netns=netns)
        address = f"{head_ip}:{port}"
        deadline = time.monotonic() + timeout_s

        def wait_for(n: int) -> None:
            while _cpus_up(address) < n:
                if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                    raise RuntimeError(f"{n} Ray node(s) not up in {timeout_s:.0f} s; see {work}/ray-*.log")
                time.sleep(1)

        # the head's other listening ports drawn free, so a local Ray instance beside it (tests) does not clash
        procs.append(_start_node(["--head", "--node-ip-address", head_ip, "--port", str(port), "--include-dashboard",
                                  "false", "--dashboard-agent-listen-port",
                                  str(_free_port()), "--metrics-export-port", str(_free_port())], None, temp("head"),
                                 work / "ray-head.log"))
        wait_for(1)
        procs.append(_start_node(["--address", address, "--node-ip-address", b_ip], netns, temp("b"),
                                 work / "ray-b.log"))
        wait_for(2)
        time.sleep(2)  # the head's scheduler learns node b's CPU from the GCS a moment after the driver does
        yield address
    finally:
        for p in reversed(procs):
            _stop(p)
        _remove_link(netns, veth[0])
        for d in temps:
            shutil.rmtree(d, ignore_errors=True)


def leaderboard(file: str, out: Path, seeds: int, *extra: str) -> dict:
    cmd = [sys.executable, "-m", "harness", "leaderboard", file, "--seeds", str(seeds), "--out", str(out), *extra]
    print("$ " + " ".join(cmd[2:]), flush=True)
    t0 = time.monotonic()
    r = subprocess.run(cmd, env=dict(os.environ, RAY_AUTH_MODE="disabled"))
    meta = json.loads((out / "leaderboard.json").read_text()) if (out / "leaderboard.json").exists() else {}
    print(f"  rc {r.returncode}, {time.monotonic() - t0:.0f} s", flush=True)
    return dict(meta, rc=r.returncode)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", default="leaderboards/scale.yaml")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("results/scale-ray"))
    parser.add_argument("--skip-pool", action="store_true", help="the one-process table is already in OUT/pool")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # SIGTERM cleans up as Ctrl-C does
    pool, ray = args.out / "pool", args.out / "ray"
    with two_nodes(args.out) as address:
        on_ray = leaderboard(args.file, ray, args.seeds, "--ray", address)
    if not args.skip_pool:
        leaderboard(args.file, pool, args.seeds, "--jobs", "1")
    same = (ray / "leaderboard.csv").read_bytes() == (pool / "leaderboard.csv").read_bytes()
    print(f"cells per Ray node: {on_ray.get('cells_per_node')}")
    print(f"{ray / 'leaderboard.csv'} {'==' if same else '!='} {pool / 'leaderboard.csv'}")
    return 0 if same and on_ray.get("rc") == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
