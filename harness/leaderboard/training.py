"""The models a leaderboard lacks, trained before its cells play (``harness leaderboard --train``).

Every learned policy that sits out an app or setting for want of a model (the coverage matrix's
"no model") has its model made by ``harness train`` with the flags the coverage recorded and the
file's own for that policy (``train:`` in the leaderboard file, versioned with it): one job per
model, in a local pool of ``jobs`` processes or as Ray tasks (``--ray``), one CPU each. A job
trains into a folder of its own and sends its files back (model, metadata, curve), so the model
folder is the same wherever a job ran, and from the same flags the same weights (tested); a
model appears in ``--model-dir`` whole or not at all. A job that fails is tried once more, then
reported: its cells sit out as "no model", as without ``--train``.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable

from harness.leaderboard.cells import Coverage, ray_tasks
from harness.leaderboard.spec import Leaderboard

Done = Callable[[Path, "str | None"], None]  # (the model, the error of its second failure or None)


def jobs_of(board: Leaderboard, cov: Coverage) -> dict[Path, list[str]]:
    """Each missing model -> ``harness train``'s flags (but ``--out``): the coverage's, then the file's."""
    out = {}
    for model, argv in sorted(cov.to_train.items()):
        policy = argv[argv.index("--policy") + 1]
        out[model] = list(argv) + shlex.split(board.train.get(policy, ""))
    return out


def train_packed(argv: list[str]) -> dict[str, bytes]:
    """``harness train argv`` in a folder of its own: its files by name (a job's resumable state,
    ``.ckpt``, stays behind: the model is what is sent back)."""
    tmp = Path(tempfile.mkdtemp(prefix="harness-train-"))
    try:
        env = {**os.environ, "OMP_NUM_THREADS": "1"}  # one core per job: the pool is the parallelism
        done = subprocess.run([sys.executable, "-m", "harness", "train", *argv, "--out", str(tmp)],
                              capture_output=True, text=True, env=env)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
            raise RuntimeError(f"harness train {' '.join(argv)}: {last}")
        return {f.name: f.read_bytes() for f in tmp.iterdir() if f.is_file() and f.suffix != ".ckpt"}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def keep(model: Path, files: dict[str, bytes]) -> None:
    """A job's files into the model's folder, the model itself last: it appears whole, with its
    metadata beside it, or not at all."""
    model.parent.mkdir(parents=True, exist_ok=True)
    for name in sorted(files, key=lambda n: n == model.name):
        part = model.parent / (name + ".part")
        part.write_bytes(files[name])
        part.replace(model.parent / name)


def train_missing(todo: dict[Path, list[str]], jobs: int, on_done: Done, ray: str | None = None) -> None:
    """Every job of ``todo`` (model -> flags), at most ``jobs`` at once, locally or on Ray
    (``ray``: "local" or a cluster's address); ``on_done(model, error)`` after each."""
    if ray is None:
        _local(todo, jobs, on_done)
    else:
        _on_ray(todo, None if ray == "local" else ray, jobs, on_done)


def _local(todo: dict[Path, list[str]], jobs: int, on_done: Done) -> None:
    # threads suffice: each job is a process of its own (harness train)
    with cf.ThreadPoolExecutor(jobs) as pool:
        pending = {pool.submit(train_packed, argv): (model, 1) for model, argv in todo.items()}
        while pending:
            done, _ = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
            for fut in done:
                model, attempt = pending.pop(fut)
                try:
                    keep(model, fut.result())
                except Exception as exc:
                    if attempt == 1:
                        pending[pool.submit(train_packed, todo[model])] = (model, 2)
                    else:
                        on_done(model, str(exc)[:500])
                    continue
                on_done(model, None)


def _on_ray(todo: dict[Path, list[str]], address: str | None, jobs: int, on_done: Done) -> None:
    for model, files, error in ray_tasks(train_packed, {m: (argv,) for m, argv in todo.items()}, address, jobs):
        try:
            if error is None:
                keep(model, files)
        except OSError as exc:
            error = f"{type(exc).__name__}: {exc}"
        on_done(model, error and error[:500])


def run(board: Leaderboard, model_dir: Path, jobs: int, ray: str | None = None,
        on_progress: Callable[[int, int], None] = lambda done, total: None) -> tuple[list[Path], dict[Path, str]]:
    """Train every model ``board``'s tracks lack in ``model_dir``: (the models made, the failed
    ones with why)."""
    from harness.leaderboard.cells import coverage

    todo = jobs_of(board, coverage(board, model_dir))
    made, failed = [], {}

    def done(model: Path, error: str | None) -> None:
        (made.append(model) if error is None else failed.__setitem__(model, error))
        on_progress(len(made) + len(failed), len(todo))
    on_progress(0, len(todo))
    if todo:
        train_missing(todo, jobs, done, ray)
    return made, failed
