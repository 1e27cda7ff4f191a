"""SIL-GPO's authors' own training (``NEW_PPO/main.py``'s ``train()`` at 17451c5, unchanged) run
beside the project at one point of Figs 8-10, on the instance their ``main.py`` trains on (their
generator's seed 3), and set beside harness's agent trained on that instance (the sweeps' model)
and their one-line greedy: does their code learn there what harness's does?

    .venv/bin/python -m studies.silgpo.authors_training --authors ../authors/NEW_PPO \\
        --point requests=10 [--episodes 2000] [--torch-seed 1] [--edge-nodes FILE]
    .venv/bin/python -m studies.silgpo.authors_training --compare-only   # from the kept curves

Their code needs ``torch_geometric`` as ``authors_trace`` does. What differs from running their
``main.py``: ``wandb`` (not installed here) is a named stand-in that records nothing (``train()``
only logs losses to it); their ``Agent.py`` turns on autograd's anomaly detection, a debugging aid
that records a stack per operation and raises on a NaN, which is turned off (43 % of the time
here; the same numbers); torch is seeded (their code does not seed it) and runs one thread on the
CPU (their ``__main__`` selects GPU 0; their ``ENV`` and agent fall back to the CPU themselves);
the point's parameter file replaces the chain 6-8 one their ``__main__`` imports (their
``train()`` still names its output files after chain 6-8). Their evaluation every 10 episodes
(``evaluate_policy``: the most probable action at each step, on the training environment; its
final delay) is what harness's curve records. Their ``train()`` keeps its ``max_train_episodes``
(20,000), which sets how its learning rates decay (harness's recipe decays them over as many), and is
stopped after its evaluation at ``--episodes``. Each run's is kept as
``<figure>-<value>-t<seed>.csv`` (numbers only) in ``studies/silgpo/authors_runs``.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import importlib.util
import random
import sys
import types
from pathlib import Path

import numpy as np

from harness.results.csvfile import write_rows
from studies.silgpo.authors_trace import _their_folder, parameter_file
from studies.silgpo.sweeps import AGENT_DIR, EPISODES, FIRST_SEED, SWEEPS, instance, label, late

RUNS = Path(__file__).resolve().parent / "authors_runs"
THEIR_OUTPUT = Path("Environmental_parameters/length_of_service")  # where their train() writes, whatever the point
THEIR_EVALUATIONS = THEIR_OUTPUT / "Evaluation_data" / "length_of_service_6_8"


class _NoRun:
    """The run ``wandb.init`` returns, in the stand-in: logs nothing."""

    def log(self, *_args, **_kwargs) -> None:
        pass


WANDB_STAND_IN = types.SimpleNamespace(init=lambda *_a, **_k: _NoRun())  # a fake: wandb is not installed here


class _Enough(Exception):
    """Raised after their evaluation at the last episode asked for: their train() runs to its
    max_train_episodes (20,000), which also sets its learning rates' decay, so it is stopped."""


def point(text: str) -> tuple[str, object]:
    """``arrival=1,3`` / ``chain=2,4`` / ``requests=10``, as ``harness train --sweep`` takes it."""
    figure, _, value = text.partition("=")
    parsed = tuple(int(v) for v in value.split(",")) if value else ()
    value = parsed if len(parsed) == 2 else parsed[0] if parsed else None
    if figure not in SWEEPS or value not in SWEEPS[figure]:
        raise argparse.ArgumentTypeError(f"{text!r}: not a point of Figs 8-10 (e.g. requests=10, chain=2,4)")
    return figure, value


def train(authors: Path, edge_nodes: Path | None, figure: str, value, episodes: int, torch_seed: int,
          progress=print) -> list[tuple[int, float]]:
    """Their ``train()`` at the point, seed 3's instance: (episode, evaluation delay) every 10."""
    import torch

    with _their_folder(authors, edge_nodes):
        for sub in ("Training_data", "Evaluation_data", "actor_Model", "critic_Model"):
            (THEIR_OUTPUT / sub).mkdir(parents=True, exist_ok=True)
        sys.modules.setdefault("wandb", WANDB_STAND_IN)
        torch.manual_seed(torch_seed)
        torch.set_num_threads(1)
        their = importlib.import_module("main")  # their main.py (its Environment seeds random and numpy with 3 on import)
        arguments = importlib.import_module("Arguments")  # their training parameters

        torch.autograd.set_detect_anomaly(False)
        file = parameter_file(authors, figure, value)
        spec = importlib.util.spec_from_file_location(f"their_{figure}_{label(value)}".replace("-", "_"), file)
        parameters = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(parameters)
        random.seed(FIRST_SEED)
        np.random.seed(FIRST_SEED)
        env = their.ENV(parameters.get_args())
        their_write = their.write_evaluate_data

        def write_and_report(path, n, reward, delay):  # their writer, a line of progress, and the stop
            their_write(path, n, reward, delay)
            if n % 10 == 0:
                progress(f"  episode {10 * n}/{episodes}: evaluated {delay:.3f}")
            if 10 * n >= episodes:
                raise _Enough

        their.write_evaluate_data = write_and_report
        sys.argv = ["main"]  # their max_train_episodes (20,000) sets the learning rates' decay, as in harness's recipe
        with open("their_stdout.log", "w") as log, contextlib.redirect_stdout(log), \
                contextlib.suppress(_Enough):  # their train() prints every step
            their.train(env, arguments.get_args())
        with open(THEIR_EVALUATIONS) as f:
            return [(10 * int(r["evaluate_num"]), float(r["evaluate_delay"])) for r in csv.DictReader(f)]


def kept(figure: str, value, seed: int) -> Path:
    return RUNS / f"{figure}-{label(value)}-t{seed}.csv"


def read(path: Path) -> list[tuple[int, float]]:
    with open(path) as f:
        return [(int(r["episode"]), float(r["delay"])) for r in csv.DictReader(f)]


def compare() -> int:
    """Every kept run beside harness's agent on the same instance and their greedy."""
    from harness.families.silgpo.agent import Curve
    from harness.families.silgpo.baselines import DEPLOYERS
    from harness.families.silgpo.world import delay

    runs = sorted(RUNS.glob("*-t*.csv"))
    if not runs:
        print(f"no kept run in {RUNS}", file=sys.stderr)
        return 2
    print(f"{'point':14s} {'run':24s} {'best (episode)':>18s} {'last':>9s} {'last 400, mean':>15s}   vs their greedy")
    for path in runs:
        stem, _, seed = path.stem.rpartition("-t")
        figure, _, v = stem.partition("-")
        value = next(x for x in SWEEPS[figure] if label(x) == v)
        greedy = delay(instance(figure, value, 0), DEPLOYERS["preferred"](instance(figure, value, 0), None)).total
        theirs = [d for e, d in read(path) if e <= EPISODES]
        ours = Curve.read(AGENT_DIR / f"sil-gpo-{figure}-{v}-a{FIRST_SEED}.pt")
        mine = ours.delay[:len(theirs)]
        for who, curve in ((f"their code, torch seed {seed}", theirs), ("harness's agent (sweeps)", mine)):
            best = min(curve)
            print(f"{figure + ' ' + v:14s} {who:24s} {best:9.3f} ({10 * (curve.index(best) + 1):5d}) {curve[-1]:9.3f} "
                  f"{np.mean(curve[-40:]):15.3f}   {best / greedy - 1:+.1%} at best, {curve[-1] / greedy - 1:+.1%} at the end")
        print(f"{'':14s} {'their greedy':24s} {greedy:9.3f}" + ("   (harness's model late: its best in the last 400)"
                                                                     if late(ours) else ""))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--authors", type=Path, help="their NEW_PPO folder (a clone beside the project)")
    ap.add_argument("--edge-nodes", type=Path, help="their edge_node.CSV, where the folder lacks it")
    ap.add_argument("--point", type=point, help="a point of Figs 8-10: requests=N, chain=LOW,HIGH, arrival=LOW,HIGH")
    ap.add_argument("--episodes", type=int, default=EPISODES, help=f"where their train() is stopped (default {EPISODES}, "
                                                                    "the sweeps' recipe)")
    ap.add_argument("--torch-seed", type=int, default=1, help="torch's seed (their code sets none)")
    ap.add_argument("--compare-only", action="store_true", help="train nothing: compare the kept runs")
    args = ap.parse_args()
    if args.compare_only:
        return compare()
    if not args.authors or not args.point:
        print("--authors and --point are needed to train (or --compare-only)", file=sys.stderr)
        return 2
    if not (args.authors / "main.py").exists():
        print(f"{args.authors / 'main.py'}: no such file (--authors: their NEW_PPO at 17451c5)", file=sys.stderr)
        return 2
    figure, value = args.point
    curve = train(args.authors.resolve(), args.edge_nodes.resolve() if args.edge_nodes else None, figure, value,
                  args.episodes, args.torch_seed, progress=lambda line: print(line, file=sys.stderr, flush=True))
    out = kept(figure, value, args.torch_seed)
    write_rows(out.with_suffix(".part"), [{"episode": e, "delay": d} for e, d in curve]).replace(out)
    print(f"wrote {out}")
    return compare()


if __name__ == "__main__":
    sys.exit(main())
