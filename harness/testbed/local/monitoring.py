"""The testbed's Prometheus (Debian's package), in the root namespace, scraping every pod.

Targets come from a file_sd file the deployer rewrites on every publish, so they follow pods
as they start, stop and move, without a restart.
"""

from __future__ import annotations

import shutil
import urllib.request
from pathlib import Path

from harness.errors import TestbedError
from harness.testbed.local import daemons

SCRAPE_INTERVAL = "1s"  # autoscaling and the rescheduler read recent CPU; REACH's runs last minutes

CONFIG = """# written by harness; targets follow the pods through {targets}
global:
  scrape_interval: {interval}
  evaluation_interval: {interval}
scrape_configs:
  - job_name: cells
    file_sd_configs:
      - files: ['{targets}']
        refresh_interval: 1s
"""


def url(port: int) -> str:
    return f"http://127.0.0.1:{port}"


def ready(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"{url(port)}/-/ready", timeout=1) as r:
            return r.status == 200
    except OSError:
        return False


def ensure(run_dir: Path, port: int) -> bool:
    """Write the config, create an empty target list if there is none, start Prometheus if it is
    not running. Returns whether anything changed."""
    binary = shutil.which("prometheus")
    if binary is None:
        raise TestbedError("prometheus is not installed (apt-get install prometheus)")
    run_dir.mkdir(parents=True, exist_ok=True)
    targets = run_dir / "prometheus-targets.json"
    if not targets.exists():
        targets.write_text("[]")
    cfg = run_dir / "prometheus.yml"
    text = CONFIG.format(targets=targets.resolve(), interval=SCRAPE_INTERVAL)
    changed = not cfg.exists() or cfg.read_text() != text
    if changed:
        cfg.write_text(text)
    pidfile = run_dir / "prometheus.pid"
    if changed and daemons.read_pid(pidfile) is not None:
        daemons.stop(pidfile)
    changed |= daemons.start(
        [binary, f"--config.file={cfg.resolve()}", f"--storage.tsdb.path={(run_dir / 'prometheus-data').resolve()}",
         f"--web.listen-address=127.0.0.1:{port}", "--storage.tsdb.retention.time=2d", "--log.level=warn"],
        pidfile=pidfile, logfile=run_dir / "prometheus.log", ready=lambda: ready(port), timeout=30)
    return changed
