"""One closed-loop user: GET the URL again as soon as the answer arrives, for N requests or
until a stop file appears (bounded by --max-seconds). Prints a JSON summary."""

import argparse
import json
import time
import urllib.error
import urllib.request
from pathlib import Path

ap = argparse.ArgumentParser()
ap.add_argument("url")
ap.add_argument("--count", type=int, default=100)
ap.add_argument("--stop-file", type=Path)
ap.add_argument("--max-seconds", type=float, default=60)
a = ap.parse_args()
statuses, lat = [], []
deadline = time.monotonic() + a.max_seconds
while len(statuses) < a.count and time.monotonic() < deadline:
    if a.stop_file and a.stop_file.exists():
        break
    t = time.perf_counter()
    try:
        with urllib.request.urlopen(a.url, timeout=10) as r:
            r.read()
            statuses.append(r.status)
    except urllib.error.HTTPError as e:
        statuses.append(e.code)
    except OSError as e:
        statuses.append(repr(e))
    lat.append((time.perf_counter() - t) * 1000)
print(json.dumps({"statuses": statuses, "latency_ms": lat}))
