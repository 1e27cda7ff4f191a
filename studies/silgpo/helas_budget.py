"""Whether HELAS's budget decides Figs 8-10's verdict where HELAS does worst: the heaviest point of
each sweep, on its first instance (the authors' generator at seed 3) or more, placed with HELAS's
sweep budget (``baselines.helas_generations``: the agent's share of delay computations) and with more.

    .venv/bin/python -m studies.silgpo.helas_budget [--times 2] [--points arrival,chain,requests]
        [--instances 1] [--jobs 2] [--out results/silgpo]

Per point, instance and budget: HELAS's total delay in the code's form, the queues it leaves unstable
(ρ ≥ 0.99, the code's rule), and the seconds it took; then the change from the sweep's budget. HELAS's
random stream is the sweeps' (seeded by the instance's index), so the first budget's row is the
sweep table's. A change of a few tenths of a percent says the GA has converged at its budget, and
that a margin against it there is not one of budget. Where SIL-GPO's models of a point are done
(``sweeps.AGENT_DIR``), its margin against HELAS at each budget follows, paired by instance as the
sweeps' (± 95 %). Writes ``helas_budget.csv`` in ``--out``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from harness.families.silgpo.baselines import helas_generations
from harness.results.csvfile import write_rows
from studies.silgpo import sweeps

HEAVIEST = (("arrival", (5, 7)), ("chain", (6, 8)), ("requests", 50))  # each sweep's last value


def placed(figure: str, value, k: int, generations: int) -> tuple[float, int, float]:
    """(total delay, unstable queues, seconds) of HELAS with ``generations`` on instance ``k``."""
    t = time.monotonic()
    total, unstable = sweeps.placed_delay(figure, value, k, "helas", generations=generations)
    return total, unstable, time.monotonic() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--times", type=int, default=2, help="the larger budget, in multiples of the sweep's")
    ap.add_argument("--points", default=",".join(f for f, _ in HEAVIEST),
                    help="which sweeps' heaviest points: arrival (λ 5-7), chain (6-8), requests (50)")
    ap.add_argument("--instances", type=int, default=1,
                    help=f"1-3 instances per point: the authors' generator at seeds {sweeps.FIRST_SEED}, "
                         f"{sweeps.FIRST_SEED + 1}, {sweeps.FIRST_SEED + 2} (the sweeps use all 3)")
    ap.add_argument("--jobs", type=int, default=1, help="processes placing, each a core (the numbers do not depend on it)")
    ap.add_argument("--out", type=Path, default=Path("results/silgpo"), help="where helas_budget.csv goes")
    args = ap.parse_args()
    points = args.points.split(",")
    if args.times < 2 or args.jobs < 1 or args.instances < 1:
        ap.error(f"--times must be 2 or more, --jobs and --instances 1 or more, not {args.times}, {args.jobs} "
                 f"and {args.instances}")
    if unknown := [p for p in points if p not in dict(HEAVIEST)]:
        ap.error(f"--points: {', '.join(map(repr, unknown))} is not one of {', '.join(dict(HEAVIEST))}")
    if args.instances > 3:  # their preferred-server rule stops on some later seeds (sweeps --seeds)
        ap.error(f"--instances must be 3 or fewer (seeds {sweeps.FIRST_SEED}-{sweeps.FIRST_SEED + 2}), not {args.instances}")
    heaviest = [(f, v) for f, v in HEAVIEST if f in points]
    budgets, rows = ("sweep", f"x{args.times}"), []
    print(f"HELAS at the heaviest point of {', '.join(points)}, {args.instances} instance(s) from seed "
          f"{sweeps.FIRST_SEED} (HELAS takes minutes a run) ...", file=sys.stderr, flush=True)
    with sweeps.placements(args.jobs) as submit:
        runs = {(figure, value, k): [(n, submit(placed, figure, value, k, n)) for n in (base, args.times * base)]
                for figure, value in heaviest for k in range(args.instances)
                for base in [helas_generations(sweeps.instance(figure, value, k))]}
        print(f"  {'point':14s} {'seed':>4s} {'generations':>11s} {'total delay':>11s} {'unstable':>8s} {'s':>5s}   change")
        for (figure, value, k), futures in runs.items():
            placed_at = [(n, future.result()) for n, future in futures]  # a --jobs 1 result is made when asked: once
            first = placed_at[0][1][0]  # the sweep budget's total delay
            for i, (n, (total, unstable, seconds)) in enumerate(placed_at):
                change = f"{100 * (total / first - 1):+.1f} %" if i else ""
                print(f"  {figure + ' ' + sweeps.label(value):14s} {sweeps.FIRST_SEED + k:4d} {n:11d} {total:11.3f} "
                      f"{unstable:8d} {seconds:5.0f}   {change}", flush=True)
                rows.append({"sweep": figure, "value": sweeps.label(value), "instance_seed": sweeps.FIRST_SEED + k,
                             "generations": n, "budget": budgets[i],
                             "total_delay": total, "unstable_queues": unstable})
    for figure, value in heaviest:
        print(_agent_margins(figure, value, rows, args.instances, budgets))
    print(f"wrote {write_rows(args.out / 'helas_budget.csv', rows)}")
    return 0


def _agent_margins(figure: str, value, rows: list[dict], instances: int, budgets: tuple[str, str]) -> str:
    """SIL-GPO's margin against HELAS at each budget, paired by instance as the sweeps' (its best
    evaluation, where every model of the point is done)."""
    agent = [sweeps.agent_delay(figure, value, k, sweeps.AGENT_DIR, sweeps.RECIPE, ready_only=True)
             for k in range(instances)]
    point = f"{figure} {sweeps.label(value)}"
    if any(a is None for a in agent):
        return f"  {point}: sil-gpo's models not all done"
    margins = []
    for budget in budgets:  # HELAS's placement of the same point and instance
        helas = {r["instance_seed"]: r["total_delay"] for r in rows
                 if (r["sweep"], r["value"], r["budget"]) == (figure, sweeps.label(value), budget)}
        m = sweeps.paired_margin([a.delay for a in agent], [helas[sweeps.FIRST_SEED + k] for k in range(instances)])
        margins.append(f"{sweeps.percent(*m)} ({budget})")
    return f"  {point}: sil-gpo (best evaluation) against helas, paired over {instances}: " + ", ".join(margins)


if __name__ == "__main__":
    sys.exit(main())
