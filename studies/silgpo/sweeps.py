"""The three sweeps of SIL-GPO's Figs 8-10 (arrival rate, chain length, number of requests) for
the deployment baselines and the agent, in the code's form of the total delay (what the figures
plot), at the values of the authors' parameter files (notes §7.2.4).

    .venv/bin/python -m studies.silgpo.sweeps [--seeds 3] [--only preferred,queue-greedy,mfds-fpr,helas]
        [--agent-dir [DIR] [--train-flags "..."] [--ready-only]] [--jobs 2] [--out results/silgpo]

Per point: each deployer's mean over the instances the authors' own generator draws at seeds
3..3+n-1 (``world.code_instance``), with a 95 % interval, and the ranking. Seed 3 is the one their
module sets on import, so the first instance is the one their ``main.py`` trains on with that
point's parameter file (the paper does not say which instance it plots; its Fig. 10 axis, 20-60
requests, is not the code's 10-50). Every point and seed is held to their code by
``tests/sim/test_authors_sweeps.py``. With ``--agent-dir``, SIL-GPO joins: one model per setting
and instance (``sil-gpo-<figure>-<value>-a<seed>.pt``; 30 requests reads λ 2-4's), trained with
``--train-flags``, by default Table II's recipe for 2,000 episodes, training seed 1..n; at the
default setting the first is the ranking's seed 1, kept in the folder above), trained where
missing, resumed where stopped (``.ckpt``), so the sweep spans sessions. It is read two ways from
its model's curve, both in the table, the CSV and the figures: ``sil-gpo-best-evaluation``, the
lowest of its greedy evaluations within the recipe's episodes (a deployment it built on that very
instance: the most generous reading of a training), and ``sil-gpo-as-trained``, its evaluation at
the recipe's last episode (the deployment its weights then build: the ranking's "the model as
trained"). A model whose best came in its last 400 episodes is named, as it may not have converged,
and once ``studies.silgpo.trainings`` (group ``longer``) has gone on with it to 3,000 episodes the
point gets a second line, ``sil-gpo-late-to-3000`` (the table and the CSV, not the figures): its
best within them, the others' as they were, ranked and set against the baselines as they were,
whether it went lower or not; the figure's summary puts it beside the recipe's reading of the same
points. It answers whether more training would change the verdict, at a larger budget than HELAS's
and with more evaluations to take the best of. HELAS's generations grow with the instances placed,
as the agent's budget does (``baselines.helas_generations``). Each row then gives SIL-GPO's margin
(mean of agent / baseline − 1 over the instances, ± its 95 % interval, Student's t; the paper does
not say how its percentages are taken) over HELAS, MFDS-FPR and the best baseline whose queues are
all stable, beside the paper's (−32.6/−24.8/−19.4 % in Fig. 8, −28.6/−20.7/−15.5 % in Fig. 9,
−35.2/−25.4/−10.6 % in Fig. 10, against HELAS/MFDS-FPR/RSDQL; RSDQL is not trained at the sweep
points), and the ranking names a deployer that leaves a queue unstable (the code scores it a flat
sojourn): the agent's from its curve, which records them since that column was added; a reading of
a model trained before is marked ``*``. Each figure ends with its margins over the points read three
ways, as the paper gives one number per sweep and does not say how: the mean of the points' margins,
the ratio of the summed delays, and the heaviest point's; and at how many points SIL-GPO is first
among the stable baselines and among the paper's (never with a deployment known to leave a queue
unstable); Fig. 10's also over the four points its axis (20-60 requests) shares with the code's
(10-50).
``--ready-only`` trains nothing: a point whose models are not all done
(``studies.silgpo.trainings`` trains them) shows how many are. Writes ``sweeps.csv`` (one row per
point, deployer and instance, named by its seed of their generator, with its unstable queues) and
``sweeps.png`` (the three figures, SIL-GPO both ways, a point hollow where a deployment leaves
a queue unstable) in ``--out``. ``--jobs`` places the baselines
in that many processes (HELAS takes minutes an instance): the same numbers, in the same order, as
one.
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Callable, Iterator
from pathlib import Path

import numpy as np

from harness.families.silgpo.baselines import DEPLOYERS, PAPERS
from harness.interrupts import deaf_worker, kill_pool
from harness.results.csvfile import write_rows
from harness.results.stats import mean_ci95
from harness.families.silgpo.world import ServiceGraph, ServiceGraphConfig, code_instance, delay
from studies.silgpo import MODELS, best_stable, form, infeasible, model

SWEEPS = {"arrival": [(1, 3), (2, 4), (3, 5), (4, 6), (5, 7)], "chain": [(2, 4), (3, 5), (4, 6), (5, 7), (6, 8)],
          "requests": [10, 20, 30, 40, 50]}
FIGURE_NUMBER = {"arrival": 8, "chain": 9, "requests": 10}
PAPER_MARGINS = {"arrival": "-32.6/-24.8/-19.4", "chain": "-28.6/-20.7/-15.5", "requests": "-35.2/-25.4/-10.6"}
AGENT_DIR = MODELS / "sweeps"
# Table II's recipe (GAT + SIL, the paper's rates) for 2,000 episodes, as the ranking: on the
# authors' instance its seeds had their bests at episodes 940-1,390, by late jumps, and the
# sweeps' instances place up to 116 instances an episode against its 62, so no shorter count is
# shown to suffice; a light recipe (MLP, ×10 rates, 400 episodes) was not shown to stand in
# (studies.silgpo.sweep_recipe)
EPISODES = 2000
RECIPE = f"--episodes {EPISODES}"
LATE = 400  # a model whose best came in its last 400 episodes is named (it may not have converged)
LONGER = 3000  # ... and continued to here (studies.silgpo.trainings, group "longer"): would more training change it?
# SIL-GPO's readings (CSV names): its lowest greedy evaluation within the recipe's episodes (the
# most generous); the model as trained (its evaluation at the recipe's last episode: the deployment
# its weights then build, what the ranking plays); the lowest with its late models gone on
AGENT, AS_TRAINED, CONTINUED = "sil-gpo-best-evaluation", "sil-gpo-as-trained", f"sil-gpo-late-to-{LONGER}"
NOT_RECORDED = "*"  # marks a reading whose deployment's unstable queues the curve does not hold
# the paper's Fig. 10 axis is 20-60 requests, the code's parameter files 10-50: its mean is also
# given over the four both have
PAPER_AXIS = {"requests": [20, 30, 40, 50]}
PAPER_FIRST = {"arrival": "first as the rate grows, little difference at the lowest", "chain": "first at every length",
               "requests": "first at every count"}
FIRST_SEED = 3  # the authors' module seeds its generators with 3 on import: the instance their main.py trains on


def distinct_points() -> list[tuple[str, object]]:
    """Every (figure, value) of Figs 8-10 whose setting is not an earlier one's (Fig. 8's λ 2-4
    and Fig. 10's 30 requests are both the default setting): 14 of the 15."""
    seen, out = set(), []
    for figure, values in SWEEPS.items():
        for value in values:
            cfg = ServiceGraphConfig(silgpo_compat=True).sweep(figure, value)
            if cfg not in seen:
                seen.add(cfg)
                out.append((figure, value))
    return out


def first_of_its_setting(figure: str, value) -> tuple[str, object]:
    """The point of ``distinct_points`` with this point's setting (Fig. 10's 30 requests: Fig. 8's
    λ 2-4): the one whose models stand for both."""
    cfg = ServiceGraphConfig(silgpo_compat=True).sweep(figure, value)
    return next(p for p in distinct_points() if ServiceGraphConfig(silgpo_compat=True).sweep(*p) == cfg)


def label(value) -> str:
    return f"{value[0]}-{value[1]}" if isinstance(value, tuple) else str(value)


def instance(figure: str, value, k: int) -> ServiceGraph:
    """Instance ``k`` of a point: the authors' generator at seed ``FIRST_SEED + k``."""
    return code_instance(ServiceGraphConfig(silgpo_compat=True).sweep(figure, value), FIRST_SEED + k)


def placed_delay(figure: str, value, k: int, name: str, **options) -> tuple[float, int]:
    """(total delay, queues left unstable) of deployer ``name`` on instance ``k`` of a point (its
    random stream seeded ``k``, as the rows have always been); ``options`` go to the deployer
    (HELAS's ``generations``: ``helas_budget``)."""
    g = instance(figure, value, k)
    d = delay(g, DEPLOYERS[name](g, np.random.default_rng(k), **options))
    return d.total, d.unstable


class _Later:
    """``--jobs 1``: a placement made in this process when its result is asked for, so that the rows
    still print as they come."""

    def __init__(self, fn: Callable, *args):
        self.fn, self.args = fn, args

    def result(self):
        return self.fn(*self.args)


@contextlib.contextmanager
def placements(jobs: int) -> Iterator[Callable]:
    """``submit(fn, *args)``, whose ``.result()`` is ``fn(*args)``: run in ``jobs`` processes (spawned:
    the parent may hold torch's threads), or in this one when ``jobs`` is 1. The workers ignore
    Ctrl-C; on it, or on any error, they are killed and what is queued is dropped, at once."""
    if jobs == 1:
        yield _Later
        return
    pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"), initializer=deaf_worker)
    try:
        yield pool.submit
    except BaseException:
        kill_pool(pool)
        raise
    pool.shutdown()


def agent_model(figure: str, value, k: int, folder: Path, flags: str) -> tuple[Path, list[str]]:
    """(model path, ``harness train`` flags) of SIL-GPO on instance ``k`` at this point (training
    seed k + 1): the one naming rule of this script and of ``studies.silgpo.trainings``. At the
    default setting the first instance is the authors' and its training seed 1: with Table II's
    recipe that is the ranking's seed 1 (the same world and flags: the same model, bit for bit),
    kept in the folder above ``folder``, as ``MODELS`` holds ``MODELS/sweeps``. A point whose
    setting an earlier one has reads that one's models (``first_of_its_setting``)."""
    figure, value = first_of_its_setting(figure, value)
    default = ServiceGraphConfig(silgpo_compat=True)
    if k == 0 and flags == RECIPE and default.sweep(figure, value) == default:
        return model(folder.parent, EPISODES, "gat", "auto", False, 1)
    sweep = f"{figure}={','.join(map(str, value)) if isinstance(value, tuple) else value}"
    return (folder / f"sil-gpo-{figure}-{label(value)}-a{FIRST_SEED + k}.pt",
            [*flags.split(), "--generator", "authors", "--instance", str(FIRST_SEED + k), "--sweep", sweep,
             "--seed", str(k + 1)])


@dataclass(frozen=True)
class Reading:
    """One of SIL-GPO's greedy evaluations on an instance, from its model's curve."""

    delay: float  # the total delay, the code's form
    unstable: int | None  # queues its deployment left at ρ ≥ 1; None where the curve does not hold them

    @classmethod
    def at(cls, curve, episode: int) -> "Reading":
        """The curve's evaluation at ``episode``."""
        return cls(curve.delay[curve.episodes.index(episode)], curve.unstable_at(episode))


def agent_delay(figure: str, value, k: int, folder: Path, flags: str, ready_only: bool = False) -> Reading | None:
    """SIL-GPO's best evaluation on instance ``k`` at this point (the deployment its greedy actor
    built at its lowest evaluation: the training and the test instance are one), from its model's
    curve; the model trained (or resumed) first if it is not in ``folder``, or None with
    ``ready_only``."""
    from harness.policies import world_learners
    from harness.families.silgpo.agent import Curve

    path, argv = agent_model(figure, value, k, folder, flags)
    episodes = world_learners.parse("sil-gpo", argv)[0].episodes
    done = world_learners.has_episodes(path, episodes)  # by its .json: a kept curve is not a training
    if ready_only and not done:
        return None
    t = time.monotonic()
    path = world_learners.trained("sil-gpo", argv, path)
    if not done:
        print(f"    trained {path.stem} in {time.monotonic() - t:.0f} s", file=sys.stderr, flush=True)
    curve = Curve.read(path)
    if late(curve, episodes):
        print(f"    {path.stem}: its best came at episode {curve.best_at(episodes)} of {episodes}", file=sys.stderr, flush=True)
    return Reading.at(curve, curve.best_at(within=episodes))  # a model trained on past the recipe: what the recipe gives


def trained_delay(figure: str, value, k: int, folder: Path, flags: str) -> Reading | None:
    """SIL-GPO on instance ``k`` as the recipe's training ended: its last evaluation within the
    recipe's episodes, the deployment its weights at that episode build (the ranking's "the model
    as trained", which plays them: the same numbers; a model gone on to ``LONGER`` has later
    weights). None while the model is not done."""
    from harness.policies import world_learners
    from harness.families.silgpo.agent import Curve

    path, argv = agent_model(figure, value, k, folder, flags)
    episodes = episodes_in(argv)
    if not world_learners.has_episodes(path, episodes):
        return None
    curve = Curve.read(path)
    return Reading.at(curve, max(e for e in curve.episodes if e <= episodes))


def late(curve, episodes: int = EPISODES) -> bool:
    """Whether a training stopped at ``episodes`` had its best in its last ``LATE``: still improving
    near the end, so a longer run may go lower."""
    return curve.best_at(within=episodes) > episodes - LATE


def episodes_in(argv: list[str]) -> int:
    """The episodes ``harness train``'s flags ask for (read, not parsed: parsing builds the world)."""
    return int(argv[argv.index("--episodes") + 1])


def longer_flags(flags: str) -> str:
    """The recipe's flags with ``LONGER`` episodes: the same training, gone on (its learning rates
    decay over the code's 20,000 episodes, so stopping at 2,000 changes nothing before it)."""
    argv = flags.split()
    argv[argv.index("--episodes") + 1] = str(LONGER)
    return " ".join(argv)


def continued_delay(figure: str, value, k: int, folder: Path, flags: str) -> tuple[Reading | None, bool]:
    """(SIL-GPO's best on instance ``k`` with its model gone on to ``LONGER`` episodes if it was
    late, else its recipe's best; whether it was late). The best is None while a late model has not
    been continued, or the model is not done. The ranking's model (the default setting's first
    instance) is never continued: it is not late (its best at episode 1,180)."""
    from harness.policies import world_learners
    from harness.families.silgpo.agent import Curve

    path, argv = agent_model(figure, value, k, folder, flags)
    episodes = episodes_in(argv)
    if not world_learners.has_episodes(path, episodes):
        return None, False
    curve = Curve.read(path)
    if not late(curve, episodes):
        return Reading.at(curve, curve.best_at(within=episodes)), False
    return (Reading.at(curve, curve.best_at(within=LONGER)) if world_learners.has_episodes(path, LONGER) else None), True


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=3,
                    help=f"instances per point: the authors' generator at seeds {FIRST_SEED}, {FIRST_SEED + 1}, ... "
                         f"(the first is the one their code trains on; their rule stops at seed 6 at two points)")
    ap.add_argument("--only", default="preferred,queue-greedy,mfds-fpr,helas")
    ap.add_argument("--figures", default=",".join(SWEEPS))
    ap.add_argument("--agent-dir", type=Path, nargs="?", const=AGENT_DIR,
                    help=f"SIL-GPO joins, its models per setting and instance kept in this folder (trained where missing; "
                         f"without a value: {AGENT_DIR}, in the repository)")
    ap.add_argument("--train-flags", default=RECIPE, help=f"harness train's flags for them (default: {RECIPE!r})")
    ap.add_argument("--ready-only", action="store_true",
                    help="train nothing: SIL-GPO counts at the points whose models are all done")
    ap.add_argument("--jobs", type=int, default=1,
                    help="processes placing the baselines, each a core (besides an agent trained with --agent-dir); "
                         "the numbers do not depend on it")
    ap.add_argument("--out", type=Path, default=Path("results/silgpo"), help="where sweeps.csv and sweeps.png go")
    args = ap.parse_args()
    if args.jobs < 1:
        ap.error(f"--jobs must be 1 or more, not {args.jobs}")
    names, t0 = args.only.split(","), time.monotonic()
    columns = names + ([AGENT] if args.agent_dir else [])
    figures = args.figures.split(",")
    for figure in figures:
        for value in SWEEPS[figure]:
            try:
                [instance(figure, value, k) for k in range(args.seeds)]
            except ValueError as exc:  # their preferred-server rule stops on some seeds
                print(f"--seeds {args.seeds}: at {figure} {label(value)}, {exc}; seeds "
                      f"{FIRST_SEED}-{FIRST_SEED + 2} (--seeds 3) hold at every point", file=sys.stderr)
                return 2
    with placements(args.jobs) as submit:  # every placement asked for at once; the rows print in order
        placing: dict[tuple, dict[str, list]] = {}  # per setting: 30 requests is λ 2-4, placed once
        for figure in figures:
            for value in SWEEPS[figure]:
                point = first_of_its_setting(figure, value)
                if point not in placing:
                    placing[point] = {name: [submit(placed_delay, *point, k, name) for k in range(args.seeds)]
                                      for name in names}
        rows = _table(args, figures, names, columns, placing)
    print(f"\n{args.seeds} instances per point (the authors' generator, seeds {FIRST_SEED}-{FIRST_SEED + args.seeds - 1}); "
          f"{time.monotonic() - t0:.0f} s; "
          f"wrote {write_rows(args.out / 'sweeps.csv', rows)} and {plot(rows, args.out / 'sweeps.png')}")
    return 0


def _table(args, figures: list[str], names: list[str], columns: list[str],
           placing: dict[tuple, dict[str, list]]) -> list[dict]:
    """Prints each figure's rows as its placements come in; the CSV's rows."""
    rows: list[dict] = []
    width = {n: max(17, len(n)) for n in columns}
    for figure in figures:
        print(f"\nFig. {FIGURE_NUMBER[figure]}, {figure}:")
        margin = (f"   sil-gpo against (paper: {PAPER_MARGINS[figure]} % against helas/mfds-fpr/rsdql; RSDQL is "
                  f"not trained at the sweep points, the third is the best stable baseline; {NOT_RECORDED}: its "
                  f"deployments' unstable queues not recorded)" if args.agent_dir else "")
        print(f"  {'value':>8s} {'N':>4s} " + " ".join(f"{n:>{width[n]}s}" for n in columns) + "   ranking" + margin)
        at: dict[str, dict[str, Margins]] = {AGENT: {}, AS_TRAINED: {}, CONTINUED: {}}  # per point
        gone_on = improved = 0  # late models continued, and of those, ones whose best went lower
        for value in SWEEPS[figure]:
            worlds = [instance(figure, value, k) for k in range(args.seeds)]
            placed = {name: [f.result() for f in futures] for name, futures in placing[first_of_its_setting(figure, value)].items()}
            runs = {name: [t for t, _ in v] for name, v in placed.items()}
            unstable: dict[str, list[int | None]] = {name: [u for _, u in v] for name, v in placed.items()}
            agent: list[Reading | None] = []
            if args.agent_dir:
                args.agent_dir.mkdir(parents=True, exist_ok=True)
                agent = [agent_delay(figure, value, s, args.agent_dir, args.train_flags, args.ready_only)
                         for s in range(len(worlds))]
                readings = {AGENT: agent} if all(r is not None for r in agent) else {}
                if readings:
                    final = [trained_delay(figure, value, s, args.agent_dir, args.train_flags) for s in range(len(worlds))]
                    if all(r is not None for r in final):
                        readings[AS_TRAINED] = final
                    continued = [continued_delay(figure, value, s, args.agent_dir, args.train_flags) for s in range(len(worlds))]
                    if any(was for _, was in continued) and all(r is not None for r, _ in continued):  # improved or not
                        readings[CONTINUED] = [r for r, _ in continued]
                        gone_on += sum(was for _, was in continued)
                        improved += sum(c.delay < a.delay for (c, _), a in zip(continued, agent))
                for who, rs in readings.items():
                    runs[who], unstable[who] = [r.delay for r in rs], [r.unstable for r in rs]
            rows += [{"figure": FIGURE_NUMBER[figure], "sweep": figure, "value": label(value), "deployer": name,
                      "instance_seed": FIRST_SEED + k, "total_delay": d,
                      "unstable_queues": "" if unstable[name][k] is None else unstable[name][k]}  # "": not recorded
                     for name, v in runs.items() for k, d in enumerate(v)]
            cells = {name: mean_ci95(v) for name, v in runs.items() if name != CONTINUED}
            rank = [_marked(n, unstable[n]) for n in sorted(cells, key=lambda n: cells[n][0])]
            line = (f"  {label(value):>8s} {int(np.mean([len(g.to_place()) for g in worlds])):4d} "
                    + " ".join(f"{f'{cells[n][0]:9.2f} ± {cells[n][1] or 0:5.2f}':>{width[n]}s}" if n in cells
                               else f"{f'{sum(r is not None for r in agent)} of {len(agent)} done':>{width[n]}s}"
                               for n in columns)
                    + "   " + " < ".join(rank))
            for who in (AGENT, AS_TRAINED, CONTINUED):
                if who in runs:  # paired by instance: the agent and each baseline placed the same ones
                    m = margins_at(runs, unstable, names, who)
                    if who != AGENT:
                        line += f"\n  {'':>13s} {_marked(who, unstable[who])}: {np.mean(runs[who]):.2f}{', first' if m.first else ''}"
                    line += "   " + ", ".join(f"{_role(role, m)} {_gap(m, role)}" for role in m.gaps)
                    at[who][label(value)] = m
            print(line, flush=True)
        heaviest = label(SWEEPS[figure][-1])
        if at[AGENT]:  # the paper gives one margin per sweep, not saying how: three readings beside it
            print(f"  {AGENT}, over {len(at[AGENT])} of {len(SWEEPS[figure])} points: {_means(at[AGENT], AGENT, heaviest)} "
                  f"(paper: {PAPER_MARGINS[figure]} % against helas/mfds-fpr/rsdql, {PAPER_FIRST[figure]})")
            if figure in PAPER_AXIS and (shared := {v: at[AGENT][v] for v in map(label, PAPER_AXIS[figure]) if v in at[AGENT]}):
                print(f"  over the {len(shared)} points on the paper's axis too ({', '.join(shared)}): "
                      f"{_means(shared, AGENT, heaviest)}")
        if at[AS_TRAINED]:
            print(f"  {AS_TRAINED} (its evaluation at episode {episodes_in(args.train_flags.split()):,}), over {len(at[AS_TRAINED])} points: "
                  f"{_means(at[AS_TRAINED], AS_TRAINED, heaviest)}")
        if at[CONTINUED]:  # beside the recipe's reading of the same points
            print(f"  {CONTINUED}, late models gone on to {LONGER:,} episodes ({gone_on} here, {improved} of them lower; "
                  f"HELAS's budget stays the recipe's), over its {len(at[CONTINUED])} points: "
                  f"{_means(at[CONTINUED], CONTINUED, heaviest)}; the recipe there: "
                  f"{_means({v: at[AGENT][v] for v in at[CONTINUED]}, AGENT, heaviest)}")
    return rows


def _marked(name: str, unstable: list[int | None]) -> str:
    """A deployer's name in a ranking: marked infeasible where one of its deployments leaves a
    queue unstable, and ``NOT_RECORDED`` where some of the agent's were not recorded."""
    known = [u for u in unstable if u is not None]
    return infeasible(name, max(known, default=0)) + (NOT_RECORDED if len(known) < len(unstable) else "")


def _role(role: str, m: "Margins") -> str:
    """A margin's label: a paper's baseline, or the best baseline (stable, unless none is)."""
    if role != "best":
        return role
    return f"best stable ({m.best})" if m.best_is_stable else f"best, none stable ({m.best})"


def _gap(m: "Margins", role: str) -> str:
    """A point's margin against ``role`` with its 95 % interval over the instances (paired)."""
    return percent(m.gaps[role], m.spread[role])


def percent(margin: float, half_width: float | None) -> str:
    """A margin in % as the tables print it, with its interval's half-width where there is one."""
    return f"{margin:+.1f} %" if half_width is None else f"{margin:+.1f} ± {half_width:.1f} %"


def paired_margin(agent: list[float], baseline: list[float]) -> tuple[float, float | None]:
    """The agent's margin over a baseline on the same instances, in %: the mean of agent / baseline
    − 1 and its 95 % half-width (Student's t; None for one instance)."""
    m, h = mean_ci95([a / b - 1 for a, b in zip(agent, baseline)])
    return 100 * m, None if h is None else 100 * h


def _means(points: dict[str, Margins], who: str, heaviest: str) -> str:
    """Three readings over some points of the margins (the paper gives one per sweep and does not
    say how it is taken): the mean of the points' margins, the summed delays' ratio, and the
    heaviest point's; and at how many ``who`` is first, among every stable baseline and among the
    paper's (a reading whose deployment leaves a queue unstable is first nowhere; one not recorded
    counts, and is told)."""
    gaps = [m.gaps for m in points.values()]
    roles = list(gaps[0])
    papers = "/".join(role for role in roles if role != "best")  # those placed here
    mine = sum(m.total for m in points.values())
    summed = {role: 100 * (mine / sum(m.totals[role] for m in points.values()) - 1) for role in roles}
    unstable_best = sum(not m.best_is_stable for m in points.values())
    name = {role: role if role != "best" else "best stable" if not unstable_best
            else f"best (none stable at {unstable_best} of {len(points)} points)" for role in roles}
    first = [m for m in points.values() if m.first]
    return (", ".join(f"{name[role]} {np.mean([g[role] for g in gaps]):+.1f} %" for role in roles)
            + " (mean of the points); " + ", ".join(f"{name[role]} {summed[role]:+.1f} %" for role in roles)
            + " (summed delays)"
            + ("; " + ", ".join(f"{name[role]} {_gap(points[heaviest], role)}" for role in roles)
               + f" (at {heaviest})" if heaviest in points else "")
            + f"; {who} first at {len(first)} of {len(points)}"
            + (f" ({sum(m.unrecorded for m in first)} with unstable queues not recorded)" if any(m.unrecorded for m in first) else "")
            + (f" (among the paper's {papers}: {sum(m.first_of_papers for m in points.values())})" if papers else ""))


@dataclass(frozen=True)
class Margins:
    """The agent against the baselines at one point (``margins_at``)."""

    gaps: dict[str, float]  # role (a paper's baseline, or "best"): the agent's mean margin, %
    spread: dict[str, float | None]  # role: its 95 % interval's half-width over the instances, % (None for one)
    total: float  # the agent's delays summed over the instances
    totals: dict[str, float]  # role: the baseline's, summed over the same instances
    best: str  # the best stable baseline at the point (the best of all where none is stable)
    best_is_stable: bool
    first: bool  # below every stable baseline, and none of its deployments known to leave a queue unstable
    first_of_papers: bool  # ... and below each of the paper's baselines (its claim: the lowest of the methods it plots)
    unrecorded: bool  # some of its deployments' unstable queues were not recorded


def margins_at(runs: dict[str, list[float]], unstable: dict[str, list[int | None]], names: list[str],
               agent: str) -> Margins:
    """At a point: the agent's mean margin (%, paired by instance: mean of agent / baseline − 1,
    negative where it is lower, with its interval; the paper does not say how its percentages are
    taken) against each of the paper's baselines and the best of ``names`` whose queues are all
    stable (role "best"), and whether its mean is below every stable one and below every one of
    the paper's, with its own deployments not known to leave a queue unstable."""
    means = {n: float(np.mean(runs[n])) for n in names}
    best = best_stable(means, {n: max(unstable[n]) for n in names})
    against = {**{n: n for n in PAPERS if n in runs}, "best": best}
    paired = {role: paired_margin(runs[agent], runs[n]) for role, n in against.items()}
    gaps, spread = ({role: p[i] for role, p in paired.items()} for i in (0, 1))
    totals = {role: float(np.sum(runs[n])) for role, n in against.items()}
    mine, own = float(np.mean(runs[agent])), unstable[agent]
    feasible = not any(own)  # None (not recorded) and 0 pass
    return Margins(gaps, spread, float(np.sum(runs[agent])), totals, best, not max(unstable[best]), feasible and mine < means[best],
                   feasible and all(mine < float(np.mean(runs[n])) for n in PAPERS if n in runs),
                   any(u is None for u in own))


def unstable_points(rows: list[dict], figure: str, name: str) -> set[str]:
    """The values of a sweep at which some instance's deployment by ``name`` leaves a queue at
    ρ ≥ 1 (known: an agent's reading not recorded is not counted)."""
    return {r["value"] for r in rows if r["sweep"] == figure and r["deployer"] == name
            and r["unstable_queues"] not in ("", None) and int(r["unstable_queues"]) > 0}


def plot(rows: list[dict], path: Path) -> Path:
    """Figs 8-10 as the paper draws them: per sweep, each deployer's mean total delay per point,
    with its 95 % interval over the instances; a hollow marker where some instance's deployment
    leaves a queue unstable (the code scores it a flat sojourn, so its mean is not a delay). The
    deployers are set a little apart along the axis, so equal means stay visible."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in rows if r["deployer"] != CONTINUED]  # the figures: the recipe's readings; the table has the rest
    figures = list(dict.fromkeys(r["sweep"] for r in rows))
    names = list(dict.fromkeys(r["deployer"] for r in rows))
    colour = {name: f"C{k}" for k, name in enumerate(names)}  # one per deployer
    fig, axes = plt.subplots(1, len(figures), figsize=(5 * len(figures), 4), squeeze=False)
    for ax, figure in zip(axes[0], figures):
        mine = [r for r in rows if r["sweep"] == figure]
        values = list(dict.fromkeys(r["value"] for r in mine))
        for j, name in enumerate(dict.fromkeys(r["deployer"] for r in mine)):
            at = {i: [r["total_delay"] for r in mine if r["deployer"] == name and r["value"] == v]
                  for i, v in enumerate(values)}
            points = [(i, *mean_ci95(d)) for i, d in at.items() if d]  # SIL-GPO: only where its models are done
            x = [i + 0.06 * (j - (len(names) - 1) / 2) for i, _, _ in points]
            ax.errorbar(x, [m for _, m, _ in points], yerr=[h or 0 for _, _, h in points], capsize=3,
                        marker="o", markersize=4, color=colour[name], label=name)
            bad = unstable_points(mine, figure, name)
            hollow = [(xi, m) for xi, (i, m, _) in zip(x, points) if values[i] in bad]
            if hollow:
                ax.plot(*zip(*hollow), linestyle="none", marker="o", markersize=7, markerfacecolor="white",
                        markeredgecolor=colour[name], zorder=3)
        ax.set_xticks(range(len(values)), values)
        ax.set_xlabel({"arrival": "arrival rate λ", "chain": "chain length", "requests": "number of requests"}[figure])
        ax.set_ylabel(f"total delay ({form(False)})")
        unrecorded = any(r["unstable_queues"] in ("", None) for r in mine)  # an agent reading from an older curve
        ax.set_title(f"Fig. {FIGURE_NUMBER[figure]} (hollow: a queue at ρ ≥ 1 at some instance"
                     + (";\nsome agent readings' queues not recorded: never hollow" if unrecorded else "") + ")", fontsize=9)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


if __name__ == "__main__":
    sys.exit(main())
