"""Per-node-type execution-time profiles (REACH §V): every service's internal job, measured on a
node of every type under a light fixed load, as the simulator's E_n^i.

For each service, one pod runs on the first node of every type, with its external calls cut
(they are the simulator's job, from the call graph and the RTTs); one closed-loop user sends
requests round-robin over the pods, one at a time, and the cell reports each job's own
duration (``x-internal-ms``), so the network between user and pod does not enter the number.

The same pods give the pod lifecycle per node type (``testbed.lifecycle``: each pod started and
waited for alone, and after its requests stopped and waited out alone), and the RTT matrix is
measured twice: its medians, and each link's spread (``Cluster.measure_rtt_spread``, where the
backend can tell).
"""

from __future__ import annotations

import csv
import json
import statistics
import urllib.request
from pathlib import Path
from typing import Callable

from harness import __version__
from harness.spec.app import App
from harness.spec.profile import Profile, Timing
from harness.spec.testbed_state import now_iso
from harness.testbed import lifecycle
from harness.testbed.cluster import Cluster

METHOD = ("one pod on the first node of each type, external calls cut; {n} requests each after {w} warm-up, "
          "one at a time, round-robin over the node types; time = the cell's x-internal-ms; each pod started and "
          "stopped alone, timed (lifecycle)")


def job_only(app: App) -> App:
    """The app with every external call removed: each pod runs just its internal job."""
    a = app.model_copy(deep=True)
    for spec in a.services.values():
        spec.external_services = []
    return a


def internal_ms(url: str) -> float:
    with urllib.request.urlopen(url, timeout=60) as r:
        r.read()
        return float(r.headers["x-internal-ms"])


def summarize(samples: list[float]) -> Timing:
    s = sorted(samples)
    return Timing(mean_ms=round(statistics.fmean(s), 3), p50_ms=round(statistics.median(s), 3),
                  p95_ms=round(s[min(len(s) - 1, int(0.95 * len(s)))], 3),
                  std_ms=round(statistics.pstdev(s), 3), samples=len(s))


def profile_app(cluster: Cluster, app: App, testbed_name: str, requests: int = 30, warmup: int = 3,
                on_step: Callable[[str], None] | None = None) -> Profile:
    if cluster.pods():
        from harness.errors import UserError

        raise UserError("an app is deployed; profiling needs the testbed to itself ('harness undeploy' first)")
    nodes = {n.name: n.type for n in cluster.nodes}
    first_of_type = lifecycle.first_of_each_type(cluster)
    bare = job_only(app)
    services: dict[str, dict[str, Timing]] = {}
    pod_times: list[lifecycle.PodTimes] = []
    for service in app.services:
        if on_step:
            on_step(service)
        one = bare.model_copy(deep=True)
        one.services = {service: one.services[service]}
        one.gateway = service
        one.entries = None  # the app's other entry services are not in this one-service app
        pods, ready = [], []
        try:
            pods, ready = lifecycle.timed_deploy(cluster, one, {service: list(first_of_type.values())})
            urls = {nodes[p.node]: f"http://{p.endpoint}/api/v1" for p in pods}
            samples: dict[str, list[float]] = {t: [] for t in urls}
            # Round-robin over node types, one request at a time: the host's speed drifts (other
            # tenants, frequency), and interleaving makes every type see the same drift.
            for i in range(warmup + requests):
                for ntype, url in urls.items():
                    ms = internal_ms(url)
                    if i >= warmup:
                        samples[ntype].append(ms)
            services[service] = {t: summarize(v) for t, v in samples.items()}
        finally:
            pod_times += lifecycle.times_of(cluster, pods, ready, lifecycle.timed_undeploy(cluster))
    types = {n.type: {"tier": n.tier, "role": n.role, "cpus": n.cpus, "memory_gb": n.memory_gb, "speed": n.speed,
                    "cost": n.cost, "gpus": n.gpus} for n in cluster.nodes}
    return Profile(app=app.name, testbed=testbed_name, created=now_iso(), harness_version=__version__,
                   method=METHOD.format(n=requests, w=warmup), node_types=types, nodes=nodes, services=services,
                   rtt_ms={"measured": cluster.measure_rtt(), "configured": cluster.rtt_configured()},
                   rtt_sd_ms=cluster.measure_rtt_spread(), lifecycle=lifecycle.summarize(pod_times))


def write_profile(profile: Profile, out_dir: Path) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"{profile.app}.{profile.testbed}"
    js, cs = out_dir / f"{stem}.json", out_dir / f"{stem}.csv"
    tmp = out_dir / f"{stem}.json.tmp"
    tmp.write_text(json.dumps(profile.model_dump(mode="json"), indent=1) + "\n")
    tmp.replace(js)
    with open(cs, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["service", "node_type", "tier", "mean_ms", "p50_ms", "p95_ms", "std_ms", "samples"])
        for s, per in profile.services.items():
            for t, tm in per.items():
                w.writerow([s, t, profile.node_types[t]["tier"], tm.mean_ms, tm.p50_ms, tm.p95_ms, tm.std_ms, tm.samples])
    return js, cs
