"""Whether HELAS's budget decides Figs 8-10's verdict where HELAS does worst: the heaviest point of
each sweep, on its first instance (the authors' generator at seed 3), placed with HELAS's sweep
budget (``baselines.helas_generations``: the agent's share of delay computations) and with more.

    .venv/bin/python -m studies.silgpo.helas_budget [--times 2] [--jobs 2] [--out results/silgpo]

Per point and budget: HELAS's total delay in the code's form, the queues it leaves unstable (ρ ≥
0.99, the code's rule), and the seconds it took; then the change from the sweep's budget. HELAS's
random stream is the sweeps' (seeded by the instance's index), so the first budget's row is the
sweep table's. A change of a few tenths of a percent says the GA has converged at its budget, and
that a margin against it there is not one of budget. Writes ``helas_budget.csv`` in ``--out``.
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
    ap.add_argument("--jobs", type=int, default=1, help="processes placing, each a core (the numbers do not depend on it)")
    ap.add_argument("--out", type=Path, default=Path("results/silgpo"), help="where helas_budget.csv goes")
    args = ap.parse_args()
    if args.times < 2 or args.jobs < 1:
        ap.error(f"--times must be 2 or more and --jobs 1 or more, not {args.times} and {args.jobs}")
    k, rows = 0, []
    print(f"HELAS at each sweep's heaviest point, instance {sweeps.FIRST_SEED} (HELAS takes minutes a run) ...",
          file=sys.stderr, flush=True)
    with sweeps.placements(args.jobs) as submit:
        runs = {(figure, value): [(n, submit(placed, figure, value, k, n)) for n in (base, args.times * base)]
                for figure, value in HEAVIEST for base in [helas_generations(sweeps.instance(figure, value, k))]}
        print(f"  {'point':14s} {'generations':>11s} {'total delay':>11s} {'unstable':>8s} {'s':>5s}   change")
        for (figure, value), budgets in runs.items():
            placed_at = [(n, future.result()) for n, future in budgets]  # a --jobs 1 result is made when asked: once
            first = placed_at[0][1][0]  # the sweep budget's total delay
            for i, (n, (total, unstable, seconds)) in enumerate(placed_at):
                change = f"{100 * (total / first - 1):+.1f} %" if i else ""
                print(f"  {figure + ' ' + sweeps.label(value):14s} {n:11d} {total:11.3f} {unstable:8d} {seconds:5.0f}   "
                      f"{change}", flush=True)
                rows.append({"sweep": figure, "value": sweeps.label(value), "instance_seed": sweeps.FIRST_SEED + k,
                             "generations": n, "total_delay": total, "unstable_queues": unstable})
    print(f"wrote {write_rows(args.out / 'helas_budget.csv', rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
