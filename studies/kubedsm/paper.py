"""Paper 004 (KubeDSM) on harness's ground, on its cluster (Table 4) and deployments (Table 5),
beside the paper's numbers.

    .venv/bin/python -m studies.kubedsm.paper workloads [--seeds 10] [--through-hpa] [--qos paper]   # Figs. 4-5, 8-9
    .venv/bin/python -m studies.kubedsm.paper variants  [--seeds 10]               # Fig. 10
    .venv/bin/python -m studies.kubedsm.paper qos       [--seeds 10]               # Fig. 11
    .venv/bin/python -m studies.kubedsm.paper speed                                # a batch of 20 pods
    .venv/bin/python -m studies.kubedsm.paper scenarios [--cycle-s 90] [--out scenarios/kubedsm]  # live files

The 10 distinct m_σ workloads (12 cycles × 90 s; ``studies.kubedsm.workloads``), the same schedules
(seeds 0..N-1) for every policy, each played as a scenario in simulation — the run `harness
evaluate SCENARIO` makes, the same as `harness run` plays live: each cycle's counts on time
(``--through-hpa``: at the HPA's default pace), the cloud unlimited as the paper models it, the
edge nodes at their capacity (``--system-reserved CORES,MIB`` for what the system's pods hold), a
pod stopped holding its room while it terminates (``--terminating-s``, 2 s; 0 for none). Edge ratio
= mean over deployments of the time-weighted share of their pods on the edge, then over seeds
(95 % CI, Student's t). Paper: KubeDSM 80 % (+13.4 % over the best baseline) on m = 1.1..1.6 σ 0.4,
78 % (+18.9 %) on m 1.5 σ 0.1..0.5; lower std across deployments in 6 of 11; NoMig > K8S by 8 %,
Original +14.9 % over NoMig, MidMig +5.1 % over Original.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
import sys
import time
from pathlib import Path

import numpy as np

from harness.policies import build
from harness.results.stats import mean_ci95
from studies.kubedsm.workloads import CYCLE_S, TERMINATING_S, WORKLOADS, Ground, app, m_sigma_schedule, scenario_doc, workload_name

BASELINES = ["k8s-edge", "bef", "sef", "cf", "random"]


@dataclass
class Played:
    """One policy's run of one schedule, as the study reads it from the run's summary."""

    edge_ratio: float
    edge_ratio_std: float  # the spread of the deployments' (time-weighted) edge shares
    per_service: dict[str, float]
    rejected: int
    migrations: dict[str, int]

    @classmethod
    def of(cls, summary: dict) -> "Played":
        m = summary["metrics"]
        return cls(m["edge_ratio"], m["edge_ratio_std"], m["edge_ratio_by_service"], m["rejected"], m["migrations"])


def ground(args) -> Ground:
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    return Ground(Path(args.results) / f"{stamp}-kubedsm-paper", args.system_reserved, args.terminating_s,
                  args.through_hpa)


def run(policies: dict[str, tuple[str, dict]], workloads, seeds: int, g: Ground):
    """Each workload's schedules (seeds 0..N-1) played for every policy: (m, σ) -> label -> [Played]."""
    a, out = app(), {}
    for m, sg in workloads:
        for seed in range(seeds):
            sch = m_sigma_schedule(a, m, sg, seed)
            runs = g.play(f"{workload_name(m, sg)}-s{seed}", sch,
                          {label: build(name, **kw) for label, (name, kw) in policies.items()}, seed)
            for label in policies:
                out.setdefault((m, sg), {}).setdefault(label, []).append(Played.of(runs[label]))
        print(f"  {workload_name(m, sg)} done", file=sys.stderr)
    print(f"  run directories: {g.out}", file=sys.stderr)
    return out


def oracle(g: Ground, schedule) -> float:
    """An upper bound for every scheduler with each cycle's counts at once: per cycle, the best
    mean edge share any packing of the pods onto the edge nodes reaches (migrations free)."""
    from harness.families.kubedsm.kubedsm import Edge
    from harness.families.kubedsm.match import Match

    st = Edge(g.view())
    out = []
    for counts in schedule:
        n = np.array([counts[s] for s in st.services])
        m = Match(n, st.req, st.used, st.cap)
        out.append(max(float(np.mean(m.vectors[c] / n)) for c in np.flatnonzero(m.fits())))
    return float(np.mean(out))


def ci(xs):
    mean, half = mean_ci95(xs)
    return f"{mean:.3f}±{half if half is not None else float('nan'):.3f}"


def workloads(args) -> bool:
    pols = {"kubedsm": ("kubedsm", {"qos": args.qos})} | {b: (b, {}) for b in BASELINES}
    g = ground(args)
    res = run(pols, WORKLOADS, args.seeds, g)
    print(f"{'workload':8s} " + " ".join(f"{p:>12s}" for p in pols) + "   best baseline  kubedsm/best  std lower?")
    ok, lower, sweep_k, sweep_b, per_seed = True, 0, [], [], []
    for (m, sg), per in res.items():
        means = {p: np.mean([r.edge_ratio for r in rs]) for p, rs in per.items()}
        stds = {p: np.mean([r.edge_ratio_std for r in rs]) for p, rs in per.items()}
        best = max(BASELINES, key=lambda b: means[b])
        ratio = means["kubedsm"] / means[best]
        ok &= all(means["kubedsm"] >= means[b] - 1e-12 for b in BASELINES)
        low = stds["kubedsm"] < stds[best]  # the spread across deployments, against the best baseline's
        lower += low
        if sg == 0.4:
            sweep_k.append(means["kubedsm"])
            sweep_b.append(means[best])
            per_seed.append([(rk.edge_ratio, rb.edge_ratio) for rk, rb in zip(per["kubedsm"], per[best])])
        print(f"{workload_name(m, sg):8s} " + " ".join(f"{ci([r.edge_ratio for r in per[p]]):>12s}" for p in pols)
              + f"   {best:>13s}  {ratio:12.3f}  {'yes' if low else 'no'}")
    k, b = float(np.mean(sweep_k)), float(np.mean(sweep_b))
    # each seed's sweep ratio (the same schedules for both, so paired): how sure the ratio is
    pairs = np.array(per_seed)  # (workloads, seeds, 2)
    by_seed = pairs[:, :, 0].mean(axis=0) / pairs[:, :, 1].mean(axis=0)
    mean, half = mean_ci95(list(by_seed))
    print(f"m = 1.1..1.6, σ 0.4: kubedsm {k:.3f}, best baseline {b:.3f}, ratio {k / b:.3f} (per seed "
          f"{mean:.3f} ± {half if half is not None else float('nan'):.3f}, 95 % CI; {by_seed.min():.3f}-{by_seed.max():.3f})"
          f"  (paper: 0.80, +13.4 %)")
    bound = np.mean([oracle(g, m_sigma_schedule(app(), m, sg, seed))
                     for m, sg in WORKLOADS if sg == 0.4 for seed in range(args.seeds)])
    print(f"upper bound on the sweep (each cycle's counts packed best, migrations free): {bound:.3f}")
    print(f"kubedsm >= every baseline on every workload: {'PASS' if ok else 'FAIL'}; "
          f">= 0.75 on the sweep: {'PASS' if k >= 0.75 else 'FAIL'}; >= 1.10 x best: {'PASS' if k / b >= 1.10 else 'FAIL'}; "
          f"lower std in {lower} of {len(res)} (paper: 6 of 11)")
    return ok


def variants(args) -> bool:
    pols = {"k8s-edge": ("k8s-edge", {})} | {v: ("kubedsm", {"variant": v, "qos": args.qos})
                                            for v in ("noedgemig", "nocloudoffload", "original", "midmig")}
    g = ground(args)
    res = run(pols, WORKLOADS, args.seeds, g)
    means = {p: float(np.mean([r.edge_ratio for per in res.values() for r in per[p]])) for p in pols}
    for p, v in means.items():
        print(f"{p:15s} {v:.3f}")
    print(f"NoEdgeMig / K8S {means['noedgemig'] / means['k8s-edge'] - 1:+.1%} (paper NoMig +8 %); Original / NoEdgeMig "
          f"{means['original'] / means['noedgemig'] - 1:+.1%} (paper +14.9 %); MidMig / Original "
          f"{means['midmig'] / means['original'] - 1:+.1%} (paper +5.1 %)")
    return True


def qos(args) -> bool:
    pols = {q: ("kubedsm", {"promised": q, "qos": args.qos}) for q in ("all-one", "all-half", "ca", "respect-d")}
    res = run(pols, [(1.5, 0.4)], args.seeds, ground(args))
    per = res[(1.5, 0.4)]
    print(f"{'promised':10s} " + " ".join(f"{d:>6s}" for d in "abcd") + "   mean")
    for q, rs in per.items():
        shares = {d: np.mean([r.per_service[d] for r in rs]) for d in "abcd"}
        print(f"{q:10s} " + " ".join(f"{shares[d]:6.3f}" for d in "abcd") + f"   {np.mean([r.edge_ratio for r in rs]):.3f}")
    print("paper (Fig. 11): all-half lowers D and raises C; ca raises C most; respect-d raises D slightly")
    return True


def speed(args) -> bool:
    """One makeDecision over a batch of 20 new pods (the paper: under 1 s), beside the default
    scheduler steered to the edge placing the same 20 one at a time, in the same run."""
    view = ground(args).view()
    pods = [view.pending(s) for _ in range(5) for s in view.app.services]  # 20 pods
    pol, ref = build("kubedsm", batch=20), build("k8s-edge")
    pol.place(view, pods)  # compile the match
    times = {}
    for name, p in (("kubedsm", pol), ("k8s-edge", ref)):
        t = time.perf_counter()
        for _ in range(10):
            p.place(view, pods)
        times[name] = (time.perf_counter() - t) / 10
    kd = times["kubedsm"]
    print(f"a batch of 20 pods: kubedsm {kd * 1000:.1f} ms, k8s-edge one at a time {times['k8s-edge'] * 1000:.1f} ms "
          f"(ratio {kd / times['k8s-edge']:.1f}x); paper: < 1 s — {'PASS' if kd < 1 else 'FAIL'}")
    return kd < 1


def scenarios(args) -> bool:
    """The workloads as scenario files for `harness run` (seed 0: the replay's first schedule):
    Table 5's app, each cycle's counts played on time (the HPA bypassed), one periodic load per
    deployment, KubeDSM's 1 s suggestion period."""
    import yaml

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for m, sg in WORKLOADS:
        name = workload_name(m, sg)
        cycles = m_sigma_schedule(app(), m, sg, 0)
        doc = scenario_doc(f"kubedsm-{name}", f"KubeDSM's m_sigma workload {name} (seed 0): {len(cycles)} cycles of "
                           f"{args.cycle_s:g} s, {args.rate:g} req/s to each deployment", cycles, args.cycle_s, args.rate)
        head = (f"# Written by python -m studies.kubedsm.paper scenarios --cycle-s {args.cycle_s:g}: KubeDSM's workload {name}\n"
                f"# on inventories/kubedsm-local.yaml (paper 004, Figs. 4-5), the study's seed-0 schedule.\n")
        (out / f"{name}.yaml").write_text(head + yaml.safe_dump(doc, sort_keys=False, default_flow_style=None))
        print(out / f"{name}.yaml")
    return True


def reserved(text: str) -> tuple[float, float]:
    cores, mib = (float(x) for x in text.split(","))
    return cores, mib


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=["workloads", "variants", "qos", "speed", "scenarios"])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--through-hpa", action="store_true", help="the schedule's counts reach the cluster at the HPA's "
                    "default pace (sync 15 s, +4 pods or +100 %%, scale-down after 300 s); default: each cycle's at once")
    ap.add_argument("--qos", default="code", choices=["code", "paper"], help="KubeDSM's QoS form")
    ap.add_argument("--system-reserved", type=reserved, default=(0.0, 0.0), metavar="CORES,MIB",
                    help="held on each edge node by the system's pods (default 0,0: the inventory's capacities)")
    ap.add_argument("--terminating-s", type=float, default=TERMINATING_S, metavar="S",
                    help=f"how long a pod scaled down still holds its node's room, as Kubernetes' graceful "
                         f"deletion does (default {TERMINATING_S:g}: a pod that exits on SIGTERM; 30: one that "
                         f"waits out the grace period; 0: freed before new pods are placed)")
    ap.add_argument("--cycle-s", type=float, default=CYCLE_S, help="scenarios: seconds per cycle (the paper: 90)")
    ap.add_argument("--rate", type=float, default=2.0, help="scenarios: requests/s to each deployment (live)")
    ap.add_argument("--out", default="scenarios/kubedsm", help="scenarios: the folder to write")
    ap.add_argument("--results", default="results", help="where the simulated runs' directories go")
    args = ap.parse_args()
    return 0 if globals()[args.what](args) else 1


if __name__ == "__main__":
    sys.exit(main())
