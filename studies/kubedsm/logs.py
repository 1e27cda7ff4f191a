"""The KubeDSM paper's numbers recomputed from its authors' published run logs (paper 004, Figs.
4-5): what "80 %, +13.4 %" averages, how many pods the HPA really made, and how much of each edge
node the pods really took — the facts the replay's reading of the workloads rests on.

    git clone https://github.com/AUT-Cloud-Lab/MineDraft    # the logs are not copied into harness
    .venv/bin/python -m studies.kubedsm.logs MineDraft [--replay [--system-reserved 1,1024]]

A log (reports/<scheduler>/<date>/normal_scenario_<m>_<σ>/*.json) is a list of snapshots, one
every 15 s, each with the pods on every node. The edge ratio is computed as harness's runs
compute it: per snapshot the mean over deployments A-D of the share of their pods on
edge nodes (which nodes are edge: the logs' config.json), then the mean over snapshots and runs.
Pod requests are Table 5's (workloads/kubedsm.json). ``--replay`` plays each logged run's own pod
counts on harness's ground (each as a replica schedule played in simulation, the run `harness
evaluate SCENARIO` makes; ``studies.kubedsm.workloads.Ground``) with the policy that stands for its
scheduler, and sets the replayed edge ratio beside the logged one: how far harness's model of
each scheduler is from what that scheduler did.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from harness.results import placement_metrics as pm
from harness.results.stats import mean_ci95
from harness import shipped
from harness.spec.app import load_app
from studies.kubedsm.paper import reserved  # the --system-reserved reading

SWEEP = [f"1.{k}_0.4" for k in range(1, 7)]
POD = re.compile(r"([a-d])-deployment-")
RUN = re.compile(r"normal_scenario_(\d\.\d_\d\.\d)(?:_\d+)?\.json$")
PAPER = "the paper: KubeDSM 0.80 on the sweep, +13.4 % over the best baseline"


def table5_requests() -> dict[str, tuple[float, float]]:
    app = load_app(shipped.workload("kubedsm"))
    return {s: (app.cpu_request(s), app.memory_request(s)) for s in app.services}


def read_run(path: Path, edge: set[str], req: dict[str, tuple[float, float]]
             ) -> tuple[float, np.ndarray, dict[str, list[tuple[float, float]]]]:
    """(edge ratio, pods per deployment per snapshot (T, 4; deployments in name order), per node
    the (cores, MiB) its pods request per snapshot)."""
    ratios, counts, held = [], [], defaultdict(list)
    for snap in json.loads(path.read_text()):
        placement: dict[str, list[str]] = defaultdict(list)  # deployment -> the node of each pod
        for node, pods in snap["pod_placement"].items():
            use = np.zeros(2)
            for pod in pods:
                m = POD.match(pod)
                if m:
                    placement[m.group(1)].append(node)
                    use += req[m.group(1)]
            held[node].append(tuple(use))
        if len(placement) == len(req):  # every deployment has a pod (not during a redeploy)
            roles = {n: pm.NodeInfo("edge" if n in edge else "other", 0.0, 0.0) for w in placement.values() for n in w}
            ratios.append(np.mean(list(pm.edge_ratios(placement, roles).values())))
            counts.append([len(placement[d]) for d in sorted(req)])
    return float(np.mean(ratios)), np.array(counts), held


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("minedraft", type=Path, help="a checkout of AUT-Cloud-Lab/MineDraft")
    ap.add_argument("--replay", action="store_true",
                    help="also replay each logged run's own pod counts with harness's policies (a few minutes)")
    ap.add_argument("--system-reserved", type=reserved, default=(1.0, 1024.0), metavar="CORES,MIB",
                    help="--replay: held on each edge node by the system (default 1,1024: the 2025-02-22 logs "
                         "never show an edge node holding more than its capacity less 1 core and 1.2 GB)")
    args = ap.parse_args()
    config = args.minedraft / "config.json"
    if not config.is_file():
        print(f"{config}: not found; expected a checkout of AUT-Cloud-Lab/MineDraft", file=sys.stderr)
        return 2
    nodes = json.loads(config.read_text())["nodes"]
    edge = {n["name"] for n in nodes if n["is_on_edge"]}
    ratio: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    held: dict[str, list[tuple[float, float]]] = defaultdict(list)
    traces: dict[str, dict[str, list[np.ndarray]]] = defaultdict(lambda: defaultdict(list))  # pods per snapshot
    req = table5_requests()
    for path in sorted((args.minedraft / "reports").glob("*/*/normal_scenario_*/*.json")):
        m = RUN.search(path.name)
        if not m:
            continue
        who = f"{path.parts[-4]}@{path.parts[-3]}"  # scheduler@date: each date is a separate campaign
        r, c, h = read_run(path, edge, req)
        ratio[who][m.group(1)].append(r)
        traces[who][m.group(1)].append(c)
        if path.parts[-4] == "ecmus-qos-aware":
            for node, xs in h.items():
                held[node] += xs
    complete = {w: per for w, per in ratio.items() if all(s in per for s in SWEEP)}
    print(f"{'scheduler@date':48s} {'runs':>4s} " + " ".join(f"{s:>7s}" for s in SWEEP) + "   sweep   pods per deployment at 1.3_0.4")
    sweep = {}
    for who, per in sorted(complete.items()):
        sweep[who] = float(np.mean([np.mean(per[s]) for s in SWEEP]))
        n = sum(len(per[s]) for s in SWEEP)
        at = np.round(np.mean([c.mean(axis=0) for c in traces[who]["1.3_0.4"]], axis=0), 1) if "1.3_0.4" in traces[who] else "-"
        print(f"{who:48s} {n:>4d} " + " ".join(f"{np.mean(per[s]):7.3f}" for s in SWEEP) + f"   {sweep[who]:.3f}   {at}")
    ours = [w for w in sweep if w.startswith("ecmus-qos-aware@")]
    others = [w for w in sweep if not w.startswith("ecmus") and not w.startswith("cloud-first")]
    for w in ours:
        best = max(others, key=sweep.get)
        print(f"{w} against the best baseline {best}: {sweep[w]:.3f} vs {sweep[best]:.3f}, "
              f"{sweep[w] / sweep[best] - 1:+.1%} ({PAPER})")
    print("what KubeDSM's pods requested on each node (cores, MiB), over every snapshot:")
    for node, xs in sorted(held.items()):
        a = np.array(xs)
        role = "edge" if node in edge else "not edge"
        print(f"  {node or 'no node (pending)'} ({role}): most {a[:, 0].max():g} cores, {a[:, 1].max():g} MiB; median {np.median(a[:, 0]):g} cores, "
              f"{np.median(a[:, 1]):g} MiB")
    if args.replay:
        replayed(complete, traces, args.system_reserved)
    return 0


# the harness policy that stands for each of the logs' schedulers
POLICY_OF = {"ecmus-qos-aware": "kubedsm", "kube-schedule": "k8s-edge", "biggest-edge-first-scheduler": "bef",
             "smallest-edge-first-scheduler": "sef", "random-scheduler": "random", "cloud-first-scheduler": "cf"}


def replayed(logged: dict[str, dict[str, list[float]]], traces, system_reserved: tuple[float, float]) -> None:
    """Each logged run's own pod counts (one snapshot every 15 s, each at once) replayed with the
    harness policy that stands for its scheduler, on the edge less ``system_reserved`` per node: the
    replay's edge ratio beside the one the run logged, run by run, so the two share the counts."""
    import tempfile

    from harness.policies import build
    from studies.kubedsm.workloads import Ground, app

    services = sorted(app().services)
    ground = Ground(Path(tempfile.mkdtemp(prefix="kubedsm-logs-")), system_reserved, cycle_s=15.0)
    print(f"\nthe logged runs' own counts replayed (snapshots 15 s apart, each at once; edge nodes less "
          f"{system_reserved[0]:g} cores and {system_reserved[1]:g} MiB):")
    print(f"{'scheduler@date':48s} {'policy':>8s}  logged  replayed  replayed - logged (95 %)")
    for who, per in sorted(logged.items()):
        policy = POLICY_OF.get(who.split("@")[0])
        if policy is None:
            continue
        pairs = []
        for wl in SWEEP:
            for r, trace in zip(per[wl], traces[who][wl]):
                schedule = [{s: max(1, int(n)) for s, n in zip(services, row)} for row in trace]
                run = ground.play(f"{policy}-{wl}-{len(pairs)}", schedule, {policy: build(policy)})[policy]
                pairs.append((r, run["metrics"]["edge_ratio"]))
        a = np.array(pairs)
        mean, half = mean_ci95(list(a[:, 1] - a[:, 0]))
        print(f"{who:48s} {policy:>8s}  {a[:, 0].mean():.3f}   {a[:, 1].mean():.3f}    {mean:+.3f} ± {half:.3f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
