"""Start the Locust worker inside the client node, follow its request log, measure its CPU."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from harness.errors import TestbedError
from harness.loadgen import WRITE_FAILED
from harness.spec.scenario import Load
from harness.testbed.cluster import Cluster, NodeProcess


def locust_prefix(requests_file: Path) -> Path:
    """Where Locust's own files go beside a request log: requests.csv -> locust_stats.csv, ...,
    locust_report.html; requests.2.csv -> locust.2_stats.csv, ..."""
    middle = requests_file.name[len("requests"):-len(".csv")]  # "" or ".2"
    return requests_file.with_name(f"locust{middle}")


class LoadProcess:
    """A load generator's process in a client node: started, waited for until it writes its
    ``ready`` file (the Unix time its load began, then a newline), watched, its CPU measured,
    stopped. What it runs is ``argv``: Locust's worker (``LoadGenerator``), or a family's own
    generator (SIL-GPO's typed Poisson arrivals, ``harness.families.silgpo.load``), each writing
    its request log in the run directory's columns (``harness.results.rundir.REQUEST_FIELDS``)."""

    def __init__(self, cluster: Cluster, node: str, argv: list[str], out: Path, log: Path, ready: Path):
        self.cluster, self.node, self.argv, self.out, self.log, self.ready = cluster, node, argv, out, log, ready
        self.proc: NodeProcess | None = None
        self.cpu_seconds = 0.0

    def start(self, timeout: float = 30) -> float:
        """Start the process and wait until its load is set up; returns when the load began (Unix s)."""
        self.ready.unlink(missing_ok=True)
        self.proc = self.cluster.start_process(self.node, self.argv, log=self.log)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.ready.exists() and self.ready.read_text().endswith("\n"):
                return float(self.ready.read_text())
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        tail = self.log.read_text(errors="replace")[-400:].strip() if self.log.exists() else "(no log)"
        self.stop(timeout=2)
        raise TestbedError(f"the load generator did not start on {self.node}: {tail}")

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def write_failure(self) -> str | None:
        """Why the worker stopped, if it stopped because it could not write its logs."""
        if self.proc is None or self.proc.poll() != WRITE_FAILED:
            return None
        try:
            return self.log.read_text(errors="replace").strip().splitlines()[-1]
        except (OSError, IndexError):
            return f"cannot write {self.out}"

    def sample_cpu(self) -> None:
        """CPU seconds the worker used so far (user + system), while it still runs."""
        if self.proc is None:
            return
        try:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(") ", 1)[1].split()
            self.cpu_seconds = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            pass

    def stop(self, timeout: float = 10) -> int | None:
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.sample_cpu()
            self.proc.terminate()
            try:
                return self.proc.wait(timeout)
            except Exception:
                self.proc.kill()
                return self.proc.wait(5)
        return self.proc.poll()


class LoadGenerator(LoadProcess):
    """Locust's worker (``harness.loadgen.worker``) playing one of a scenario's loads."""

    def __init__(self, cluster: Cluster, node: str, gateway: str, load: Load, duration_s: float, out: Path,
                 seed: int | None, log: Path):
        self.schedule = log.with_suffix(".schedule.json")
        ready = log.with_suffix(".started")
        self.schedule.write_text(json.dumps({"mode": load.mode, "steps": [s.model_dump() for s in load.steps],
                                             "trace": [e.model_dump() for e in load.trace],
                                             "duration_s": duration_s, "timeout_s": load.timeout_s}))
        argv = [sys.executable, "-m", "harness.loadgen.worker", "--endpoints", str(cluster.endpoints_file.resolve()),
                "--service", gateway, "--schedule", str(self.schedule), "--out", str(out),
                "--ready", str(ready), "--csv", str(locust_prefix(out)), "--html", f"{locust_prefix(out)}_report.html"]
        if seed is not None:
            argv += ["--seed", str(seed)]
        super().__init__(cluster, node, argv, out, log, ready)


class RequestTail:
    """New complete rows of a growing request log, for the live display."""

    def __init__(self, path: Path):
        self.path, self.offset, self.header = path, 0, None

    def read(self) -> list[list[str]]:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return []
        end = data.rfind(b"\n")
        if end < 0:
            return []
        self.offset += end + 1
        rows = [line.split(",") for line in data[:end].decode(errors="replace").split("\n") if line]
        if self.header is None and rows:
            self.header, rows = rows[0], rows[1:]
        return rows
