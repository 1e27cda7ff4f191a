"""Learning curves: CSV for people and scripts, PNG to look at."""

from __future__ import annotations

import csv
from pathlib import Path


def write_curve(rows: list[tuple[int, float, float]], csv_path: Path, png_path: Path, title: str) -> None:
    """rows: (env steps, mean episodic return over the last episodes, wall seconds)."""
    with open(csv_path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["env_steps", "mean_return", "seconds"])
        w.writerows(rows)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5), dpi=120)
    ax.plot([r[0] for r in rows], [r[1] for r in rows])
    ax.set_xlabel("environment steps")
    ax.set_ylabel("mean episodic return")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(png_path)
    plt.close(fig)
