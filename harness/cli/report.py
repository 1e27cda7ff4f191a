"""harness report: figures, tables and one self-contained HTML page from runs, sweeps and leaderboards."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from harness.cli.main import app


@app.command()
def report(
    inputs: list[Path] = typer.Argument(..., help="Run directories, session directories (results/<utc>-<scenario>/), "
                                        "'harness sweep' output (CSV/JSON), or a 'harness leaderboard' folder."),
    out: Optional[Path] = typer.Option(None, "--out", help="Folder for report.html, PNGs and tables "
                                       "(default: <first input>/report)."),
    baseline: Optional[str] = typer.Option("default", "--baseline", help="Policy the others are compared with."),
    threshold_ms: float = typer.Option(250.0, "--threshold-ms", min=0, help="Latency threshold for the 'share under' column."),
    json_out: bool = typer.Option(False, "--json", help="Print {page, folder, runs, evaluations, leaderboards, "
                                  "problems, files} as JSON (docs/json-output.md)."),
) -> None:
    """Plots, tables and one self-contained HTML report: latency over time with faults, moves and
    scale events marked (REACH Figs. 9-10), RPS over time (Fig. 11), latency CDF and tails, mean
    with 95 % CI across seeds and the improvement over the baseline, simulator vs real per
    placement, and Fig. 8-style bars for 'harness sweep' output. Missing or corrupt files are
    named in the report and in problems.txt; the rest is still built."""
    import time

    from harness.errors import UserError
    from harness.results.collect import find
    from harness.results.report import build

    t = time.monotonic()
    col = find(inputs)
    if not col.runs and not col.evaluations and not col.leaderboards:
        raise UserError("nothing to report: " + "; ".join(col.problems), field="inputs")
    target = out or (inputs[0] if inputs[0].is_dir() else inputs[0].parent) / "report"
    page = build(col, target, baseline, threshold_ms)
    if json_out:
        from harness.cli.output import print_json

        print_json({"page": str(page), "folder": str(target), "runs": len(col.runs), "evaluations": len(col.evaluations),
                    "leaderboards": len(col.leaderboards), "problems": list(col.problems),
                    "files": sorted(str(f.relative_to(target)) for f in target.rglob("*") if f.is_file())})
        return
    for p in col.problems:
        print(f"warning: {p}")
    from harness.results.report import card_text

    if (card := card_text(target)) is not None:  # both worlds: the fidelity card's headline
        print(f"fidelity, simulation vs live (all columns in {target / 'sim_vs_live.csv'}):\n{card}")
    print(f"report of {len(col.runs)} run(s), {len(col.evaluations)} evaluation(s) and {len(col.leaderboards)} "
          f"leaderboard(s) in {time.monotonic() - t:.1f}s: {page}")
