"""SIL-GPO's authors' own training (``NEW_PPO/main.py``'s ``train()`` at 17451c5, unchanged) run
beside the project at one point of Figs 8-10, on the instance their ``main.py`` builds (their
generator's seed 3; at 17451c5 its ``__main__`` evaluates a saved model, its call to ``train()``
commented out), and set beside harness's agent trained on that instance (training seed 1: the
sweeps' model; ``--harness-seed N`` trains others, their curves kept beside the runs) and their
one-line greedy: does their code learn there what harness's does? Each side's mean, and their
difference with Welch's interval, over the episodes every curve has.

    .venv/bin/python -m studies.silgpo.authors_training --authors ../authors/NEW_PPO \\
        --point requests=10 [--episodes 2000] [--torch-seed 1] [--edge-nodes FILE]
    .venv/bin/python -m studies.silgpo.authors_training --point requests=10 --harness-seed 2
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
import importlib.util
import random
import sys
import types
from pathlib import Path

import numpy as np

from harness.families.silgpo.world import parse_sweep
from harness.results.csvfile import read_rows, write_rows
from studies.silgpo.authors_trace import _their_folder, their_parameters
from studies.silgpo.sweeps import AGENT_DIR, EPISODES, FIRST_SEED, RECIPE, SWEEPS, agent_model, instance, label

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
    try:
        figure, value = parse_sweep(text)
        known = value in SWEEPS[figure]
    except ValueError:
        known = False
    if not known:
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
        parameters = their_parameters(authors, figure, value)
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
        return [(10 * r["evaluate_num"], r["evaluate_delay"]) for r in read_rows(THEIR_EVALUATIONS)]


def kept(figure: str, value, seed: int) -> Path:
    return RUNS / f"{figure}-{label(value)}-t{seed}.csv"


def read(path: Path) -> list[tuple[int, float]]:
    return [(r["episode"], r["delay"]) for r in read_rows(path)]


def their_greedy(g) -> float:
    """Their ``greedy_deployment()``'s total delay: every instance on its service's preferred
    server, room or not (harness's ``preferred`` keeps to capacity, which differs where their
    greedy overfills a server, at λ 3-5 and up)."""
    from harness.families.silgpo.world import delay

    X = g.initial()
    for m in g.to_place():
        X[m, g.preferred[m]] += 1
    return delay(g, X).total


def harness_model(figure: str, value, seed: int) -> tuple[Path, list[str]]:
    """(path, ``harness train`` flags) of harness's agent on the instance their code trains on,
    training seed ``seed``: seed 1 is the sweeps' own model; others are kept beside the runs."""
    path, argv = agent_model(figure, value, 0, AGENT_DIR, RECIPE)
    if seed == 1:
        return path, argv
    return RUNS / f"{path.stem}-s{seed}.pt", [*argv[:argv.index("--seed")], "--seed", str(seed)]


def train_harness(figure: str, value, seed: int, work: Path) -> Path:
    """harness's agent at the point, training seed ``seed``, trained (resumably) in ``work``; its
    ``.json`` and ``.curve.csv`` kept in ``RUNS``, the weights not (nothing published plays them)."""
    import shutil

    import torch

    from harness.policies import world_learners

    torch.set_num_threads(1)  # as the trainings queue runs the sweeps' models (several at once on few cores)
    path, argv = harness_model(figure, value, seed)
    work.mkdir(parents=True, exist_ok=True)
    done = world_learners.trained("sil-gpo", argv, work / path.name, lambda e, total, d: e % 100 or print(
        f"  episode {e}/{total}: evaluated {d:.3f}", file=sys.stderr, flush=True))
    for suffix in (".json", ".curve.csv"):
        shutil.copy(done.with_suffix(suffix), path.with_suffix(suffix))
    return path


def _summary(who: str, curve: list[float], greedy: float) -> str:
    best = min(curve)
    return (f"  {who:34s} {best:9.3f} ({10 * (curve.index(best) + 1):5d}) {curve[-1]:9.3f} {np.mean(curve[-40:]):10.3f}"
            f"   {best / greedy - 1:+6.1%} {np.mean(curve[-40:]) / greedy - 1:+6.1%}")


def compare() -> int:
    """Per point, every kept run of their code beside harness's agent on the same instance (each
    seed kept), over the same episodes, and their greedy; then each side's mean with its 95 %
    interval."""
    from harness.families.silgpo.agent import Curve
    from harness.results.stats import difference_ci95, mean_ci95

    runs = sorted(p for p in RUNS.glob("*-t*.csv") if not p.name.startswith("sil-gpo-"))  # not harness's curves
    if not runs:
        print(f"no kept run in {RUNS}", file=sys.stderr)
        return 2
    points = dict.fromkeys(path.stem.rpartition("-t")[0] for path in runs)
    for stem in points:
        figure, _, v = stem.partition("-")
        value = next((x for x in SWEEPS.get(figure, []) if label(x) == v), None)
        if value is None:
            print(f"{RUNS / stem}-t*.csv: {stem!r} is not a point of Figs 8-10 (e.g. requests-10, chain-2-4)",
                  file=sys.stderr)
            return 2
        greedy = their_greedy(instance(figure, value, 0))
        theirs = {int(p.stem.rpartition("-t")[2]): [d for e, d in read(p) if e <= EPISODES]
                  for p in runs if p.stem.rpartition("-t")[0] == stem}
        ours = {}
        for seed in range(1, 10):
            path = harness_model(figure, value, seed)[0]
            if path.with_suffix(".curve.csv").exists():
                ours[seed] = Curve.read(path).delay
        n = min(len(c) for c in [*theirs.values(), *ours.values()])  # every curve over the same episodes
        theirs, ours = {k: c[:n] for k, c in theirs.items()}, {k: c[:n] for k, c in ours.items()}
        print(f"{figure} {v} (their generator's seed {FIRST_SEED}), {10 * n} episodes; their greedy {greedy:.3f}")
        print(f"  {'':34s} {'best (episode)':>17s} {'last':>9s} {'last 400':>10s}   best, last 400 vs greedy")
        for seed, curve in sorted(theirs.items()):
            print(_summary(f"their code, torch seed {seed}", curve, greedy))
        for seed, curve in sorted(ours.items()):
            print(_summary(f"harness's agent, seed {seed}" + (" (sweeps)" if seed == 1 else ""), curve, greedy))
        for who, side in (("their code", theirs), ("harness's agent", ours)):
            if side:
                best = mean_ci95([min(c) for c in side.values()])
                tail = mean_ci95([float(np.mean(c[-40:])) for c in side.values()])
                print(f"  {who}: best {best[0]:.3f} ± {best[1] or 0:.3f}, last 400 {tail[0]:.3f} ± {tail[1] or 0:.3f} "
                      f"({len(side)} seed{'s' if len(side) > 1 else ''})")
        if len(theirs) > 1 and len(ours) > 1:
            best = difference_ci95([min(c) for c in theirs.values()], [min(c) for c in ours.values()])
            tail = difference_ci95([float(np.mean(c[-40:])) for c in theirs.values()],
                                   [float(np.mean(c[-40:])) for c in ours.values()])
            print(f"  their code − harness's (Welch, 95 %): best {best[0]:+.3f} ± {best[1]:.3f}, "
                  f"last 400 {tail[0]:+.3f} ± {tail[1]:.3f}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--authors", type=Path, help="their NEW_PPO folder (a clone beside the project)")
    ap.add_argument("--edge-nodes", type=Path, help="their edge_node.CSV, where the folder lacks it")
    ap.add_argument("--point", type=point, help="a point of Figs 8-10: requests=N, chain=LOW,HIGH, arrival=LOW,HIGH")
    ap.add_argument("--episodes", type=int, default=EPISODES, help=f"where their train() is stopped (default {EPISODES}, "
                                                                    "the sweeps' recipe)")
    ap.add_argument("--torch-seed", type=int, default=1, help="torch's seed (their code sets none)")
    ap.add_argument("--harness-seed", type=int, help="train harness's agent at --point instead (Table II's recipe, "
                                                      "this training seed; seed 1 is the sweeps' model)")
    ap.add_argument("--work", type=Path, default=Path.home() / ".cache" / "harness" / "silgpo-authors-runs",
                    help="where --harness-seed trains (its state and weights stay there)")
    ap.add_argument("--compare-only", action="store_true", help="train nothing: compare the kept runs")
    args = ap.parse_args()
    if args.compare_only:
        return compare()
    if args.harness_seed == 1:
        print("--harness-seed 1 is the sweeps' own model (studies.silgpo.trainings trains it); give 2 or more",
              file=sys.stderr)
        return 2
    if args.harness_seed and args.point:
        print(f"wrote {train_harness(*args.point, args.harness_seed, args.work)}")
        return compare()
    if not args.authors or not args.point:
        print("--point is needed, with --authors (their training) or --harness-seed (harness's); or --compare-only",
              file=sys.stderr)
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
