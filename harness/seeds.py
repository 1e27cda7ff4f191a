"""Seeds: which seeds a session plays, and the one name of a run's seed.

Every command that repeats a run (``harness evaluate``, ``run``, ``sweep``, ``leaderboard``) takes
``--seeds N`` (how many seeds: runs per policy) and ``--seed S`` (the first, default 0) and plays
the seeds S, S+1, ..., S+N-1, every policy each seed. A seed is what a run draws from: the load
generator's arrivals live, the loads and background in simulation; the same seed gives every
policy the same draw. A run is named by its policy and seed: the folder ``<policy>-s<seed>``, the
label ``<policy> s<seed>``, the ``seed`` field of its summary and its comparison row."""

from __future__ import annotations

from harness.errors import UserError


def seed_list(count: int, first: int = 0) -> list[int]:
    """``--seeds count --seed first``: the seeds first, first+1, ..., first+count-1."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise UserError(f"expected a whole number of seeds, at least 1, got {count!r}", field="--seeds")
    if isinstance(first, bool) or not isinstance(first, int) or first < 0:
        raise UserError(f"expected a whole number, at least 0, got {first!r}", field="--seed")
    return list(range(first, first + count))


def run_folder(policy: str, seed: int) -> str:
    """A run directory's name in its session folder: the policy's label made one safe path part (a
    policy's arguments may hold a path, ``rsdql[model=models/x.pt]``: no separator or ``..``
    reaches the file system)."""
    import re

    safe = re.sub(r"[^A-Za-z0-9._=,+@\[\]-]", "_", policy).replace("..", "__")
    return f"{safe}-s{seed}"


def run_label(policy: str, seed) -> str:
    """How a run is shown (progress lines, tables, the report); ``seed`` "mean" for a policy's mean."""
    return f"{policy} {'mean' if seed == 'mean' else f's{seed}'}"
