"""A leaderboard's tables: the long table of every number (one row per run and metric, traceable
to its run directory), the ranked table per track (mean ± 95 % CI over the track's cells, rank,
ratio to the track's reference (``default`` unless it names another) paired cell by cell: every policy met the same cells), the coverage matrix,
and the rank agreement of the two worlds where both were played."""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

from harness.leaderboard.cells import METRIC_FIELDS, TIMED_OUT, Cell, Coverage
from harness.leaderboard.spec import Leaderboard
from harness.results.stats import mean_ci95, spearman
from harness.results.summary import value

LONG_FIELDS = ("track", "inventory", "app", "scenario", "world", "policy", "seed", "metric", "value", "run_dir")


def long_rows(cell: Cell, summaries: list[dict]) -> list[dict]:
    """The cell's runs as long-table rows, one per metric that has a value."""
    rows = []
    for s in summaries:
        for m in METRIC_FIELDS:
            v = value(s, m)
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
                rows.append({"track": cell.track, "inventory": cell.inventory or ("servicegraph" if cell.world == "servicegraph" else "reach-local"), "app": cell.app,
                             "scenario": cell.scenario, "world": s.get("world", "live"), "policy": s["policy"],
                             "seed": cell.seed, "metric": m, "value": v, "run_dir": s.get("run_dir", "")})
    return rows


def sort_key(row: dict) -> tuple:
    return (row["track"], row["app"], row["scenario"], row["world"], row["policy"], int(row["seed"]), row["metric"])


def write_long(rows: list[dict], out: Path, parquet: bool = True) -> list[Path]:
    """``leaderboard.csv`` (and ``leaderboard.parquet`` when pyarrow is installed), rows in one order
    whatever order the cells finished in. Written whole to a side file and renamed: a sweep stopped
    mid-write keeps the last complete table (what ``--resume`` reads)."""
    rows = sorted(rows, key=sort_key)
    path = out / "leaderboard.csv"
    part = path.with_suffix(".csv.part")
    with open(part, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=LONG_FIELDS)
        w.writeheader()
        w.writerows(rows)
    part.replace(path)
    written = [path]
    if not parquet:
        return written
    try:
        import pandas as pd

        pd.DataFrame(rows, columns=list(LONG_FIELDS)).to_parquet(out / "leaderboard.parquet", index=False)
        written.append(out / "leaderboard.parquet")
    except ImportError:
        pass  # Parquet needs pyarrow (the leaderboard extra); the CSV holds the same rows
    return written


def read_long(out: Path) -> list[dict]:
    """``leaderboard.csv``'s rows as ``long_rows`` made them (seed an int, value a float); none if absent."""
    path = out / "leaderboard.csv"
    if not path.exists():
        return []
    with open(path, newline="") as f:
        return [{**r, "seed": int(r["seed"]), "value": _number(r["value"])} for r in csv.DictReader(f)]


def _number(text: str) -> int | float:
    """As it was written: an int stays an int (the table is rewritten the same)."""
    return int(text) if text.lstrip("-").isdigit() else float(text)


@dataclass
class Ranked:
    policy: str
    cells: int
    mean: float
    half: float | None
    ratio: float | None = None  # to the reference, mean of the per-cell ratios
    ratio_half: float | None = None
    rank: int = 0
    paired_by: str = "cell"  # what the interval is over and the ratio pairs: "cell", or "seed" in a one-cell track


def ranked(rows: list[dict], track: str, metric: str, better: str, world: str = "sim",
           reference: str = "default") -> list[Ranked]:
    """The track's policies by their mean ``metric`` (ties share a rank). The unit is the cell
    (app, scenario): a policy's seeds in a cell are averaged first — they repeat one setting, and
    where nothing in it is random they repeat one number, which would narrow an interval falsely —
    then the mean and its 95 % interval are over the cells, and so is the ratio to the reference.
    A track of one cell has nothing else to vary: its unit is the run (cell, seed), so the interval
    is over the repeats (zero where they repeat one number) and the ratio pairs the runs of one
    seed, which took turns."""
    mine = [r for r in rows if r["track"] == track and r["metric"] == metric and r["world"] == world]
    one_cell = len({(r["app"], r["scenario"]) for r in mine}) == 1
    per: dict[str, dict[tuple, list[float]]] = {}
    for r in mine:
        unit = (r["app"], r["scenario"]) + ((int(r["seed"]),) if one_cell else ())
        per.setdefault(r["policy"], {}).setdefault(unit, []).append(float(r["value"]))
    cell_means = {p: {c: sum(v) / len(v) for c, v in cells.items()} for p, cells in per.items()}
    ref = cell_means.get(reference, {})
    out = []
    for policy, vals in cell_means.items():
        mean, half = mean_ci95(list(vals.values()))
        ratios = [v / ref[c] for c, v in vals.items() if c in ref and ref[c]]
        rm, rh = mean_ci95(ratios) if ratios else (None, None)
        out.append(Ranked(policy, len({c[:2] for c in vals}), mean, half, rm, rh, paired_by="seed" if one_cell else "cell"))
    sign = 1 if better == "lower" else -1
    out.sort(key=lambda r: (sign * r.mean, r.policy))
    for i, r in enumerate(out):
        r.rank = out[i - 1].rank if i and math.isclose(r.mean, out[i - 1].mean, rel_tol=1e-9) else i + 1
    return out


def fmt_ci(mean: float | None, half: float | None, digits: int = 3) -> str:
    if mean is None:
        return "-"
    return f"{mean:.{digits}f}" + (f" ± {half:.{digits}f}" if half is not None else "")


def ranked_text(board: Leaderboard, rows: list[dict], world: str = "sim") -> str:
    lines = []
    for t in board.tracks:
        table = ranked(rows, t.name, t.primary, t.better, world, t.reference)
        by = table[0].paired_by if table else "cell"
        lines.append(f"\n{t.name} ({world}): {t.primary}, {t.better} is better; ratio to {t.reference}, paired by {by}")
        w = max([16] + [len(r.policy) for r in table])  # a policy with arguments is a long name
        lines.append(f"{'rank':>4s}  {'policy':{w}s} {'cells':>5s}  {t.primary + ' (95 % CI)':>24s}  {'ratio to ' + t.reference:>18s}")
        for r in table:
            lines.append(f"{r.rank:4d}  {r.policy:{w}s} {r.cells:5d}  {fmt_ci(r.mean, r.half):>24s}  "
                         f"{fmt_ci(r.ratio, r.ratio_half):>18s}")
    return "\n".join(lines)


def write_ranked(board: Leaderboard, rows: list[dict], out: Path, world: str = "sim") -> Path:
    path = out / f"ranked-{world}.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["track", "metric", "better", "rank", "policy", "cells", "mean", "ci95", "reference",
                    "ratio_to_reference", "ratio_ci95", "paired_by"])
        for t in board.tracks:
            for r in ranked(rows, t.name, t.primary, t.better, world, t.reference):
                w.writerow([t.name, t.primary, t.better, r.rank, r.policy, r.cells, r.mean, r.half, t.reference, r.ratio,
                            r.ratio_half, r.paired_by])
    return path


def coverage_cells(board: Leaderboard, cov: Coverage, failed: dict[tuple, str]) -> dict[tuple[str, str], str]:
    """(policy, track) -> what the coverage matrix says: ran, or why not (every empty cell a reason)."""
    out = {}
    for t in board.tracks:
        for (track, policy), apps in cov.ran.items():
            if track != t.name:
                continue
            missing = cov.missing[(track, policy)]
            mine = [k for k in failed if k[0] == track and policy in failed[k].partition(": ")[0].split()]
            timed_out = sorted({k[1] for k in mine if failed[k].partition(": ")[2].startswith(TIMED_OUT)})
            broken = sorted({k[1] for k in mine} - set(timed_out))
            text = f"ran on {len(apps)} of {len(t.apps)} apps" if apps else ""
            if missing:
                reasons = sorted(set(missing.values()))
                text = (text + "; " if text else "") + "; ".join(reasons)
            if broken:
                text += f"; failed cells on {', '.join(broken)}"
            if timed_out:
                text += f"; cells timed out on {', '.join(timed_out)}"
            out[(cov.label.get(policy, policy), track)] = text
    return out


def write_coverage(board: Leaderboard, cov: Coverage, failed: dict, out: Path) -> tuple[Path, str]:
    cells_ = coverage_cells(board, cov, failed)
    policies = sorted({p for p, _ in cells_})
    path = out / "coverage.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["policy"] + [t.name for t in board.tracks])
        for p in policies:
            w.writerow([p] + [cells_.get((p, t.name), "not in this track's policies") for t in board.tracks])
    width = max(len(t.name) for t in board.tracks) + 2
    pw = max([16] + [len(p) for p in policies])
    lines = ["\ncoverage (policy × track):"]
    for p in policies:
        lines.append(f"  {p:{pw}s} " + " | ".join(f"{t.name}: {cells_.get((p, t.name), 'not in the track'):{width}s}"
                                                   for t in board.tracks))
    return path, "\n".join(lines)


def agreement(board: Leaderboard, rows: list[dict]) -> dict[str, float | None]:
    """Per track, Spearman's ρ between the policies' ranks in simulation and live (None unless
    both worlds hold at least three of the same policies)."""
    out = {}
    for t in board.tracks:
        sim = {r.policy: r.mean for r in ranked(rows, t.name, t.primary, t.better, "sim")}
        live = {r.policy: r.mean for r in ranked(rows, t.name, t.primary, t.better, "live")}
        both = sorted(set(sim) & set(live))
        out[t.name] = spearman([sim[p] for p in both], [live[p] for p in both]) if len(both) >= 3 else None
    return out
