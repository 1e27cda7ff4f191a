"""Paper 003's instances on harness's one ground: a generated instance (``harness.families.rollout.world``)
written as the files any scenario is made of — an inventory (a node type per node with its CPU,
RAM, ``pod_cost`` o_v and ``data_cost`` n_v; RTTs twice the instance's one-way delays), one app
file per app (a chain with its ``sources``, ``data_size`` and per-call ``max_delay_ms``), one
profile, and a scenario deploying them together with no rescheduling — then played by
``harness evaluate``'s run for any policies, each run's summary scoring its placement
(``metrics.cost_delay``).

    .venv/bin/python -m studies.rollout.ground write DIR [--apps 10] [--seed 0]
    .venv/bin/python -m studies.rollout.ground track [--dir scenarios/multiapp] [--apps 10] [--instances 3]
    .venv/bin/python -m studies.rollout.ground table4 [--apps 10,20] [--instances 20] [--time-limit 30] [--policy-time-limit 10]

- write: one instance's files in DIR, and the ``harness evaluate`` command that plays them.
- track: the leaderboard's multi-app-placement track (``leaderboards/seeds.yaml``): the apps of
  seeds 0..N-1 on seed 0's infrastructure, one folder each under ``scenarios/multiapp/``.
- table4: ``studies.rollout.paper table4`` on the ground. Per instance the greedy's and the
  rollout's objectives are read from their runs' summaries and checked against the compiled search
  on the instance itself (they must be equal: the ground adds nothing to the problem); the
  reference is the same MILP as ``paper`` (started from the rollout's assignment); the MILP as a
  policy (``cost-delay-milp``) runs too, and its summary's gap is printed beside.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

from harness.policies import build
from harness.families.rollout.world import LAYERS, Instance, InstanceConfig, generate
from harness.families.rollout import milp as multiapp_milp
from studies.rollout.paper import ci95, ratio

CLIENT_RTT_MS = 2.0  # the user beside the near edge; paper 003 has no user: it only times the requests
EXEC_MS = 10.0  # the profile's execution time of every microservice (paper 003 has none)


def node_names(inst: Instance) -> list[str]:
    counts: dict[int, int] = {}
    out = []
    for layer in inst.infra.layer:
        out.append(f"{LAYERS[layer]}-{counts.get(layer, 0)}")
        counts[layer] = counts.get(layer, 0) + 1
    return out


def write(inst: Instance, folder: Path, name: str = "multiapp", testbed: str | None = None,
          max_microservices: int | None = None) -> Path:
    """The instance's inventory (named ``testbed``, default ``name``), apps, profile and scenario
    ``<name>.yaml`` in ``folder``; the scenario's path. The profile holds every ``app<k>-ms<i>``
    up to ``max_microservices`` (default the instance's largest app), so instances of one
    infrastructure share their inventory and profile."""
    folder.mkdir(parents=True, exist_ok=True)
    inf, names = inst.infra, node_names(inst)
    tiers = [LAYERS[layer] for layer in inf.layer]
    delay = {}  # one RTT per tier pair: the generator's delays are per layer pair
    for a in range(inf.V):
        for b in range(inf.V):
            if a != b:
                delay["-".join(sorted((tiers[a], tiers[b])))] = float(2 * inf.delay[a, b])
    delay |= {f"{t}-client": CLIENT_RTT_MS if t == "near-edge" else delay.get(f"{t}-near-edge",
              delay.get(f"near-edge-{t}", 0.0)) + CLIENT_RTT_MS for t in set(tiers)}
    types = {f"t{v}": {"tier": tiers[v], "cpus": float(inf.cpu[v]), "memory_gb": float(inf.ram[v]), "speed": 1.0,
                       "pod_cost": float(inf.op_cost[v]), "data_cost": float(inf.net_cost[v])} for v in range(inf.V)}
    types["user"] = {"tier": "client", "cpus": 1.0, "memory_gb": 1.0, "speed": 1.0}
    testbed = testbed or name
    inventory = {"name": testbed, "tiers": {"near-edge": {"role": "edge"}, "far-edge": {"role": "edge"}},
                 "node_types": types, "nodes": [{"name": n, "type": f"t{v}"} for v, n in enumerate(names)]
                 + [{"name": "user-0", "type": "user"}], "rtt_ms": delay}
    (folder / "inventory.yaml").write_text(yaml.safe_dump(inventory, sort_keys=False))
    apps = []
    for k, a in enumerate(inst.apps):
        services = {}
        for i in range(len(a.cpu)):
            calls = [(j, lam) for i2, j, lam in a.arcs if i2 == i]
            services[f"ms{i}"] = {
                "internal_service": {"compute_pi": {"range_complexity": [50, 50]}},
                "external_services": [{"seq_len": 1, "services": [f"ms{j}"], "max_delay_ms": {f"ms{j}": lam}}
                                      for j, lam in calls],
                "cpu-requests": float(a.cpu[i]), "memory-requests": f"{float(a.ram[i])!r}Gi",
                "data_size": float(a.data[i])}
        path = folder / f"app{k}.json"  # named as given: relative to where harness runs, or harness's own tree
        path.write_text(json.dumps({"name": f"app{k}", "gateway": "ms0", "sources": {"ms0": names[a.source]},
                                    "cost_weight": inst.w, "services": services}, indent=1))
        apps.append(str(path))
    timing = {"mean_ms": EXEC_MS, "p50_ms": EXEC_MS, "p95_ms": EXEC_MS, "std_ms": 0.0, "samples": 1}
    most = max_microservices or max(len(a.cpu) for a in inst.apps)
    timings = {f"app{k}-ms{i}": {t: timing for t in types if t != "user"} for k in range(len(inst.apps))
               for i in range(most)}
    rtt = {a: {b: 0.0 if a == b else float(2 * inf.delay[i, j]) for j, b in enumerate(names)} for i, a in enumerate(names)}
    profile = {"app": "+".join(f"app{k}" for k in range(len(inst.apps))), "testbed": testbed, "created": "",
               "harness_version": "", "method": f"studies.rollout.ground: {EXEC_MS:g} ms per microservice",
               "node_types": {t: {k: v for k, v in d.items() if k in ("tier", "cpus", "memory_gb", "speed")}
                              for t, d in types.items()},
               "nodes": {n: f"t{v}" for v, n in enumerate(names)} | {"user-0": "user"},
               "services": timings, "rtt_ms": {"configured": rtt}}
    (folder / "profile.json").write_text(json.dumps(profile))
    scenario = {"name": name, "description": f"paper 003: {len(inst.apps)} apps placed once on a three-layer continuum",
                "duration_s": 10, "app": apps, "warmup_s": 0,
                "load": [{"entry": f"app{k}", "mode": "periodic", "steps": [{"at_s": 0, "value": 0.5}]}
                         for k in range(len(inst.apps))],
                "rescheduler": {"max_moves": 0}}
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(scenario, sort_keys=False))
    return path


def write_track(folder: Path, cfg: InstanceConfig, seeds: range, name: str = "multiapp") -> list[Path]:
    """Instances for a leaderboard track, which has one inventory: the apps of ``seeds`` each on
    the infrastructure of the first seed, in ``folder/s<seed>/``, the one inventory and profile in
    the first folder; the scenarios' paths."""
    infra = generate(cfg, seeds[0]).infra
    paths = [write(Instance(infra, generate(cfg, seed).apps, cfg.w), folder / f"s{seed}", f"{name}-s{seed}", name,
                   cfg.microservices[1]) for seed in seeds]
    for p in paths[1:]:  # the same as the first folder's: the track names that one
        (p.parent / "inventory.yaml").unlink()
        (p.parent / "profile.json").unlink()
    return paths


def play(folder: Path, policies: dict, results: Path, gap_time_limit_s: float = 0.0) -> dict[str, dict]:
    """Each policy's summary of one simulated run of the instance written in ``folder``."""
    from harness import shipped
    from harness.scenarios.session import prepare, run_simulated
    from harness.spec.inventory import load_inventory
    from harness.testbed.simulated import simulated_state

    state = simulated_state(load_inventory(folder / "inventory.yaml"))
    scenario = next(p for p in folder.glob("*.yaml") if p.name != "inventory.yaml")
    session = prepare(str(scenario), ["default"], state, None, folder / "profile.json",
                      shipped.find("models"), results, folder=folder.name)
    session.policies = dict(policies)
    rows = run_simulated(state, session, 1, gap_time_limit_s=gap_time_limit_s)
    return {r["policy"]: r for r in rows}


def cmd_write(args) -> int:
    cfg = InstanceConfig.basic(apps=args.apps)
    path = write(generate(cfg, args.seed), Path(args.dir), args.name)
    print(f"wrote {args.dir}: inventory.yaml, app0..app{args.apps - 1}.json, profile.json, {path.name}\nplay it: "
          f"harness evaluate {path} --inventory {Path(args.dir) / 'inventory.yaml'} --profile "
          f"{Path(args.dir) / 'profile.json'} --policy greedy-bestfit,rollout,cost-delay-milp,default --seeds 1")
    return 0


def cmd_track(args) -> int:
    """The leaderboard's multi-app track: its instances under ``scenarios/multiapp/``."""
    paths = write_track(Path(args.dir), InstanceConfig.basic(apps=args.apps), range(args.instances))
    print("wrote " + ", ".join(str(p) for p in paths))
    return 0


def cmd_table4(args) -> int:
    policies = {"greedy": build("greedy-bestfit"), "rollout": build("rollout", beta=0.9, gamma=0.8),
                "milp": build("cost-delay-milp", time_limit_s=args.policy_time_limit)}
    tmp = Path(tempfile.mkdtemp(prefix="rollout-ground-"))
    results = Path(args.results) / f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-rollout-ground"
    print(f"{'apps':>4s} {'MILP proved':>11s} {'greedy gap':>16s} {'rollout gap':>16s} {'ratio':>6s} "
          f"{'ground = direct':>15s} {'milp policy gap':>16s}")
    ok = True
    for apps in [int(x) for x in args.apps.split(",")]:
        cfg = InstanceConfig.basic(apps=apps)
        gaps: dict[str, list[float]] = {"greedy": [], "rollout": [], "milp": []}
        solved, same = 0, 0
        for seed in range(args.instances):
            inst = generate(cfg, seed)
            folder = tmp / f"a{apps}-s{seed}"
            write(inst, folder)
            runs = play(folder, policies, results, gap_time_limit_s=args.policy_time_limit)
            got = {p: runs[p]["metrics"]["cost_delay"] for p in policies}
            direct = {p: policies[p].solve_instance(inst) for p in ("greedy", "rollout")}
            equal = all(abs(got[p]["objective"] - direct[p].objective) < 1e-9 and got[p]["rejected"] == 0
                        for p in direct)
            same += equal
            m = multiapp_milp.solve(inst, args.time_limit, start=direct["rollout"].assign)
            ref = m.objective if m.status == "optimal" else m.bound
            solved += m.status == "optimal"
            for p in direct:
                gaps[p].append(got[p]["objective"] / ref - 1)
            if got["milp"].get("gap") is not None:
                gaps["milp"].append(got["milp"]["gap"])
            print(f"  {apps} apps, seed {seed}: greedy {got['greedy']['objective']:.2f} (direct "
                  f"{direct['greedy'].objective:.2f}), rollout {got['rollout']['objective']:.2f} (direct "
                  f"{direct['rollout'].objective:.2f}), milp policy {got['milp']['objective']:.2f}, reference "
                  f"{ref:.2f} ({m.status})", file=sys.stderr)
        (g, gh), (r, rh) = ci95(gaps["greedy"]), ci95(gaps["rollout"])
        mg = f"{np.mean(gaps['milp']):+.1%}" if gaps["milp"] else "-"
        print(f"{apps:4d} {solved:>5d} of {args.instances:<3d} {g:+7.1%} ± {gh:5.1%} {r:+7.1%} ± {rh:5.1%} "
              f"{ratio(r, g):6.2f} {same:>7d} of {args.instances:<3d}  {mg:>14s}")
        ok &= same == args.instances
    print(f"run directories: {results}")
    return 0 if ok else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write", help="one instance's files")
    w.add_argument("dir")
    w.add_argument("--apps", type=int, default=10)
    w.add_argument("--seed", type=int, default=0)
    w.add_argument("--name", default="multiapp", help="the scenario's and the inventory's (testbed's) name")
    t = sub.add_parser("table4", help="Table 4 on the ground, checked against the direct search")
    t.add_argument("--apps", default="10,20")
    t.add_argument("--instances", type=int, default=20)
    t.add_argument("--time-limit", type=float, default=30.0, help="the reference MILP's (as paper's table4)")
    t.add_argument("--policy-time-limit", type=float, default=10.0, help="cost-delay-milp's and the summaries' gap's")
    t.add_argument("--results", default="results")
    k = sub.add_parser("track", help="the leaderboard track's instances (leaderboards/seeds.yaml)")
    k.add_argument("--dir", default="scenarios/multiapp")
    k.add_argument("--apps", type=int, default=10)
    k.add_argument("--instances", type=int, default=3)
    args = ap.parse_args()
    return {"write": cmd_write, "track": cmd_track, "table4": cmd_table4}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
