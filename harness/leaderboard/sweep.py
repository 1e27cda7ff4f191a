"""``harness leaderboard``'s work: the file's tracks into cells, the cells played (``cells``), the
tables written and printed (``tables``), and what the sweep was (``leaderboard.json``: the file,
its version, harness's commit, the seeds, the wall time, any failed cell)."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from harness import shipped
from harness.interrupts import cleanup_shield, sigint_sets
from harness.leaderboard import cells as cl
from harness.leaderboard import tables
from harness.leaderboard.spec import Leaderboard, load_leaderboard
from harness.seeds import seed_list


@dataclass
class Sweep:
    board: Leaderboard
    rows: list[dict] = field(default_factory=list)
    failed: dict[tuple, str] = field(default_factory=dict)  # cell key -> error
    coverage: cl.Coverage | None = None
    seconds: float = 0.0  # wall time of every part of the sweep (a resumed one has several)
    parts: int = 1
    mode: str = "sim"
    not_live: dict[str, str] = field(default_factory=dict)  # track -> why its cells were not played live
    interrupted: bool = False  # stopped by Ctrl-C (SIGTERM, SIGHUP): the tables hold the cells played by then
    left: int = 0  # cells not played (interrupted)
    played_on: dict[str, int] = field(default_factory=dict)  # on Ray: cells per node (its address) this part


class Interrupted(KeyboardInterrupt):
    """A sweep stopped by Ctrl-C (SIGTERM, SIGHUP) after its finished cells were written: the long,
    ranked and coverage tables and ``leaderboard.json`` (``interrupted``, ``cells_left``)."""

    def __init__(self, sweep: Sweep):
        super().__init__()
        self.sweep = sweep


def run(file: Path, out: Path, seeds: int, jobs: int, model_dir: Path,
        on_progress: Callable[[int, int], None] = lambda done, total: None, ray: str | None = None,
        mode: str = "sim", cluster=None, state_dir: Path | None = None, resume: bool = False,
        first_seed: int = 0, cell_budget_s: float = cl.CELL_BUDGET_S) -> Sweep:
    """The sweep of ``file`` into ``out``, ``seeds`` seeds from ``first_seed`` (``harness.seeds``)
    per (track, app, scenario). ``mode`` sim: every cell in simulation, on a local
    process pool of ``jobs`` or with ``ray`` on a Ray cluster ("local": a local instance of
    ``jobs`` CPUs; else its address); live: every cell whose track's inventory is the testbed's
    played on ``cluster``, one after another (seed k seeds the load); both: the two, so the
    tables set the worlds side by side. ``resume``: ``out`` holds a stopped sweep of the same
    file; the cells whose rows its long table has are kept, not played again. The long table is
    rewritten as cells finish (at most every few seconds, and when the sweep stops), so a sweep
    stopped by a crash keeps every finished cell. Ctrl-C (SIGTERM, SIGHUP) stops the simulated
    cells at once (within ``cells.POLL_S``: the cells in flight killed), and a live cell as a
    live run stops; the cells finished by then are written, tables and ``leaderboard.json``
    marked interrupted, then ``Interrupted`` is raised. ``cell_budget_s``: a simulated cell
    still playing after it (in the process pool or on Ray) is reported timed out, its worker
    killed."""
    board = load_leaderboard(file)
    cl.check_policies(board, file)  # a policy that does not exist: one line, before the folder is made
    with writer(out):
        return _run(file, board, out, seeds, jobs, model_dir, on_progress, ray, mode, cluster, state_dir, resume,
                    first_seed, cell_budget_s)


def _run(file, board, out, seeds, jobs, model_dir, on_progress, ray, mode, cluster, state_dir, resume, first_seed,
         cell_budget_s) -> Sweep:
    sweep = Sweep(board, mode=mode)
    kept = resumed(file, out) if resume else set()
    out.mkdir(parents=True, exist_ok=True)
    copy = out / "leaderboard.yaml"
    if not (copy.exists() and copy.samefile(file)):  # resumed from its own copy: nothing to copy
        shutil.copy(file, copy)  # the file as it was: results of two versions do not compare
    if resume:
        sweep.rows = [r for r in tables.read_long(out) if (r["track"], r["app"], r["scenario"], r["seed"], r["world"]) in kept]
    sweep.coverage = cl.coverage(board, model_dir)
    cells = cl.cells(board, sweep.coverage, seed_list(seeds, first_seed))
    todo = [c for c in cells if c.key + ("sim",) not in kept] if mode != "live" else []
    live: list[cl.Cell] = []
    if mode != "sim":
        for t in board.tracks:
            if (why := cl.live_mismatch(t, cluster.state.name)) is not None:
                sweep.not_live[t.name] = why
        live = [c for c in cells if c.track not in sweep.not_live and c.key + (cl.LIVE,) not in kept]
    live_set = set(live)
    t0, done, saved = time.monotonic(), [0], [time.monotonic()]

    def finished(cell: cl.Cell, summaries: list[dict] | None, error: str | None) -> None:
        done[0] += 1
        if error is not None:
            sweep.failed[cell.key + ((cl.LIVE,) if cell in live_set else ())] = " ".join(cell.policies) + f": {error}"
        else:
            for s in summaries:  # run directories relative to the results folder: the folder moves whole
                s["run_dir"] = str(Path(s["run_dir"]).resolve().relative_to(out.resolve()))
            if (node := summaries[0].get(cl.PLAYED_ON) if summaries else None) is not None:
                sweep.played_on[node] = sweep.played_on.get(node, 0) + 1
            sweep.rows += tables.long_rows(cell, summaries)
            if cell in live_set or time.monotonic() - saved[0] > CHECKPOINT_S:
                tables.write_long(sweep.rows, out, parquet=False)
                saved[0] = time.monotonic()
        on_progress(done[0], len(todo) + len(live))
    on_progress(0, len(todo) + len(live))
    stop = threading.Event()
    try:
        with sigint_sets(stop):  # the executors stop at their next look, what finished handed on
            if todo and ray is None:
                cl.run_cells(todo, out, model_dir, jobs, finished, budget_s=cell_budget_s, stop=stop)
            elif todo:
                cl.run_cells_on_ray(todo, out, model_dir, None if ray == "local" else ray, jobs, finished,
                                    budget_s=cell_budget_s, stop=stop)
        if stop.is_set():
            raise KeyboardInterrupt
        if live:  # a live run takes Ctrl-C its own way (its clean-up first), then raises it
            cl.run_cells_live(live, out, model_dir, cluster, state_dir, finished)
    except KeyboardInterrupt:
        sweep.interrupted = True
    finally:  # stopped or not, every finished cell's rows are on disk, and how long this part took
        with cleanup_shield("saving the leaderboard's finished cells"):
            tables.write_long(sweep.rows, out, parquet=False)
            parts = record_part(out, time.monotonic() - t0, done[0], resume)
    sweep.seconds, sweep.parts = sum(p["seconds"] for p in parts), len(parts)
    sweep.left = len(todo) + len(live) - done[0]
    with cleanup_shield("writing the leaderboard's tables"):
        write(sweep, file, out, seeds, jobs, ray)
    if sweep.interrupted:
        raise Interrupted(sweep)
    return sweep


LOCK = ".sweep.lock"
_held: set[Path] = set()  # the folders this process writes into (the lock is taken once per process)


@contextmanager
def writer(out: Path) -> Iterator[None]:
    """One writer per results folder: an ``flock`` on ``out/.sweep.lock`` (made with the folder),
    held for the block; a second sweep into ``out`` is refused at once, in one line naming the
    first. The kernel drops the lock when its holder exits, however it exits."""
    from harness.errors import UserError

    key = out.resolve()
    if key in _held:
        yield
        return
    out.mkdir(parents=True, exist_ok=True)
    f = open(out / LOCK, "a+")
    try:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            holder = f.read().strip() or "another process"
            raise UserError(f"another harness leaderboard ({holder}) is writing into this folder; wait for it to "
                            "end or give another --out", source=str(out), field="--out") from None
        f.seek(0)
        f.truncate()
        f.write(f"pid {os.getpid()}")
        f.flush()
        _held.add(key)
        try:
            yield
        finally:
            _held.discard(key)
            f.seek(0)
            f.truncate()
            fcntl.flock(f, fcntl.LOCK_UN)
    finally:
        f.close()


CHECKPOINT_S = 10.0  # the long table rewritten at most this often while simulated cells finish
PARTS = "sweep-parts.json"


def record_part(out: Path, seconds: float, cells: int, resume: bool) -> list[dict]:
    """Every part of the sweep in ``out`` (one per run of ``harness leaderboard``, stopped or
    not) with its wall time and cells played: the sweep's wall time is their sum."""
    path = out / PARTS
    parts = json.loads(path.read_text()) if resume and path.exists() else []
    parts.append({"ended_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "seconds": round(seconds, 1),
                  "cells_played": cells})
    tmp = path.with_suffix(".part")
    tmp.write_text(json.dumps(parts, indent=1))
    tmp.replace(path)
    return parts


def resumed(file: Path, out: Path) -> set[tuple]:
    """The cells (track, app, scenario, seed, world) a stopped sweep in ``out`` finished; refused
    when ``out`` holds another leaderboard file (or another version of this one)."""
    from harness.errors import UserError

    before = out / "leaderboard.yaml"
    if not before.exists():
        raise UserError("nothing to resume here (no leaderboard.yaml); drop --resume to start a sweep",
                        source=str(out), field="--resume")
    if load_leaderboard(before) != load_leaderboard(file):
        raise UserError(f"a sweep of another leaderboard file (or version) than {file}: results of the two do not "
                        "compare; give a new --out", source=str(before), field="--resume")
    return {(r["track"], r["app"], r["scenario"], r["seed"], r["world"]) for r in tables.read_long(out)}


def write(sweep: Sweep, file: Path, out: Path, seeds: int, jobs: int, ray: str | None = None) -> None:

    tables.write_long(sweep.rows, out)
    for world in worlds(sweep.mode):
        tables.write_ranked(sweep.board, sweep.rows, out, world)
    tables.write_coverage(sweep.board, sweep.coverage, sweep.failed, out)
    meta = {"file": str(file), "name": sweep.board.name, "version": sweep.board.version,
            "git_commit": shipped.commit(), "seeds": seeds, "jobs": jobs, "executor": ray and f"ray:{ray}" or "pool",
            "cells_per_node": dict(sorted(sweep.played_on.items())) if ray else None,
            "argv": sys.argv,
            "wall_s": round(sweep.seconds, 1), "parts": sweep.parts, "rows": len(sweep.rows), "mode": sweep.mode,
            "not_live": sweep.not_live, "sim_live_spearman": tables.agreement(sweep.board, sweep.rows)
            if sweep.mode == "both" else None, "interrupted": sweep.interrupted, "cells_left": sweep.left,
            "failed_cells": [{"cell": list(k), "error": e} for k, e in sorted(sweep.failed.items())]}
    (out / "leaderboard.json").write_text(json.dumps(meta, indent=1))


def worlds(mode: str) -> list[str]:
    return {"sim": ["sim"], "live": ["live"], "both": ["sim", "live"]}[mode]
