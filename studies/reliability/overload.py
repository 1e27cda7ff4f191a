"""An overload ladder on the provisioned testbed: open-loop rates from half to ten times the
rate the app serves, every request accounted for (issue 43).

    .venv/bin/harness provision
    .venv/bin/python -m studies.reliability.overload [--multiples 0.5,1,2,5,10] [--seconds 60] [--out results]

First the saturation rate is measured: a closed loop of ``--users`` (8) users on Chain for 30 s;
its answered requests per second is what the testbed serves. Then each multiple of it is played
open loop (`harness run`, policy default) for ``--seconds``, and printed: requests sent (the
worker's count), rows written, the share timed out and unfinished, offered (sent) and answered
rates, the run's verdict (kept_up, exit status) and whether the testbed was left clean (no pod,
no process of the run on a node).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import yaml

from harness import shipped


def scenario(folder: Path, name: str, load: dict, seconds: float) -> Path:
    doc = {"name": name, "description": f"overload ladder: {load}", "duration_s": seconds, "warmup_s": 5,
           "app": "chain", "replicas": 1, "load": load, "rescheduler": {"period_s": 1000, "start_s": 1000, "max_moves": 0}}
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def harness(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True, cwd=shipped.ROOT)


def run(path: Path, out: Path) -> tuple[dict, int, Path]:
    r = harness("run", str(path), "--policy", "default", "--out", str(out))
    session = max(out.glob(f"*-{path.stem}"), key=lambda p: p.stat().st_mtime)
    run_dir = next(session.glob("default-s0"))
    return json.loads((run_dir / "summary.json").read_text()), r.returncode, run_dir


def sent_by_worker(run_dir: Path) -> int | None:
    m = re.search(r"sent (\d+) requests", (run_dir / "loadgen.log").read_text()) if (run_dir / "loadgen.log").exists() else None
    return int(m.group(1)) if m else None


def clean() -> bool:
    """No pod deployed and no process of a run left on the nodes (`harness undeploy` has nothing to do)."""
    r = harness("undeploy")
    return r.returncode == 0 and "nothing deployed" in r.stdout and "stray" not in r.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--multiples", default="0.5,1,2,5,10")
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--users", type=int, default=8)
    ap.add_argument("--out", type=Path, default=Path("results"))
    args = ap.parse_args()
    folder = args.out / f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-overload-ladder"
    folder.mkdir(parents=True)
    sat, code, _ = run(scenario(folder, "saturation", {"mode": "closed", "steps": [{"at_s": 0, "value": args.users}]},
                                30), folder)
    rate = float(sat["rps"])
    print(f"saturation: {args.users} closed-loop users answered {rate:.2f} req/s (exit {code})", flush=True)
    print(f"{'x':>5s} {'offered/s':>9s} {'sent':>6s} {'worker':>6s} {'rows':>6s} {'lost':>4s} {'timed out':>9s} "
          f"{'unfinished':>10s} {'sent/s':>7s} {'answered/s':>10s} {'kept up':>7s} {'exit':>4s} {'clean':>5s}")
    bad = 0
    for m in (float(x) for x in args.multiples.split(",")):
        path = scenario(folder, f"open-{m:g}x", {"mode": "open", "steps": [{"at_s": 0, "value": round(m * rate, 3)}]},
                        args.seconds)
        s, code, run_dir = run(path, folder)
        rows = sum(max(0, f.read_text().count("\n") - 1) for f in run_dir.glob("requests*.csv"))
        worker = sent_by_worker(run_dir)
        lost = (worker - rows) if worker is not None else None
        ok_clean = clean()
        bad += bool(lost) or not ok_clean
        print(f"{m:5g} {m * rate:9.2f} {s.get('sent', 0):6d} {worker if worker is not None else '-':>6} {rows:6d} "
              f"{lost if lost is not None else '-':>4} {s.get('timeouts', 0) / max(1, s.get('sent', 1)):9.1%} "
              f"{s.get('unfinished', 0):10d} {s.get('sent_rps', 0):7.2f} {s.get('rps', 0):10.2f} "
              f"{str(s.get('kept_up')):>7s} {code:4d} {str(ok_clean):>5s}", flush=True)
    print(f"results in {folder}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
