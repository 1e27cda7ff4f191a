"""Learning curves: CSV for people and scripts, PNG to look at."""

from __future__ import annotations

import csv
from pathlib import Path


def write_curve(rows: list[tuple], csv_path: Path, png_path: Path, title: str,
                columns: tuple[str, ...] = ("env_steps", "mean_return", "seconds"),
                labels: tuple[str, str] = ("environment steps", "mean episodic return")) -> None:
    """rows: (x, y, …) under ``columns`` (default: env steps, mean episodic return over the last
    episodes, wall seconds); the PNG plots y against x with ``labels``."""
    with open(csv_path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(columns)
        w.writerows(rows)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5), dpi=120)
    ax.plot([r[0] for r in rows], [r[1] for r in rows], marker="." if len(rows) < 50 else None)
    ax.set_xlabel(labels[0])
    ax.set_ylabel(labels[1])
    ax.set_title(title)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(png_path)
    plt.close(fig)


class ReturnTracker:
    """Episodic returns of a batch of environments; the mean of the last ``window`` episodes."""

    def __init__(self, num_envs: int, window: int = 200):
        import numpy as np
        from collections import deque

        self.np = np
        self.current = np.zeros(num_envs)
        self.done: deque[float] = deque(maxlen=window)

    def add(self, rewards, ended) -> None:
        self.current += rewards
        for b in self.np.flatnonzero(ended):
            self.done.append(float(self.current[b]))
            self.current[b] = 0

    def mean(self) -> float:
        return float(self.np.mean(self.done)) if self.done else 0.0
