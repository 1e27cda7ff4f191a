"""Every training SIL-GPO's study rests on, as one queue that a few lanes (processes) work through.
Trainings run in a work folder outside the repository (``--work``, default
``~/.cache/harness/silgpo-trainings``), each resumed from its ``.ckpt`` where stopped (saved every
50 episodes); a finished model's ``.json`` and ``.curve.csv`` — what the study's numbers are read
from — are copied into ``studies/silgpo/models/`` (``--models``), with its weights (``.pt``) only
for the models the study plays again (the ranking's, the paper form's and the ablations').
Training state never enters the repository.

    .venv/bin/python -m studies.silgpo.trainings [--lanes 2] [--only ranking,paper,...] [--list] [--background]

The groups, in the order the lanes take them (a training already begun goes first: its state lives
only in the work folder):

- ``ranking``: the default setting's five seeds of SIL-GPO (GAT, the code's SIL rule) and of
  RSDQL (MLP encoders), 2,000 episodes each, in turns (what ``studies.silgpo.agent --seeds 5``
  ranks);
- ``paper``: SIL-GPO scored in the paper's form of the total delay (seconds), seeds 1-3, with the
  code's SIL rule, each seed beside its control without SIL (the rule's threshold, 5 above the
  best evaluation, is in the code's units);
- ``light``: a light recipe (MLP, ×10 rates, 400 episodes) on the authors' instance, seeds 1-3,
  which ``studies.silgpo.sweep_recipe`` sets against the full one (not shown to stand in);
- ``ablations``: GAT without SIL, GAT with SIL always on (the paper's Algorithm 1) and PPO over
  MLP encoders, seeds 1-3, 2,000 episodes (``studies.silgpo.agent --sil off|on`` / ``--encoder
  mlp``; ``studies.silgpo.ablations``);
- ``sweeps``: one model per distinct point of Figs 8-10 and instance (the authors' generator,
  seeds 3-5), Table II's recipe for 2,000 episodes (``sweeps.RECIPE``; ``studies.silgpo.sweeps
  --agent-dir``; Fig. 8's λ 2-4 and Fig. 10's 30 requests are one setting, trained once, and its
  first instance is the ranking's seed 1), every point's first instance first, so the figures fill
  in whole, one instance at a time;
- ``longer``: each sweep model whose best came in its last 400 episodes (``sweeps.late``), gone on
  to 3,000 (``sweeps.LONGER``) from its saved state: the same training run longer, whose curve
  keeps the 2,000 episodes the figures read (checked before it replaces the kept one). Without a
  state saved at 2,000 (a fresh machine) it is passed by, or with ``--anew`` trained from the
  start, 3,000 episodes, and kept only if its first 2,000 repeat the kept curve's (a training is
  the same bit for bit however often it is stopped; one that does not is moved aside as
  ``<name>.not-kept.*``). The GAT models trained before each compile started from an empty cache
  (``gat.for_speed``) cannot be repeated so. Would more training change them? (Listed
  once its model is done: the queue is asked again as each training ends, so a model that ends
  late goes on in the same run, from the state it has just saved.)

The names and flags are those scripts' own (``agent.model``, ``agent.rsdql_model``,
``sweeps.agent_model``), so they find what this trained. A model being trained is locked
(``<name>.lock``): a second queue, or a lane of this one, passes it by. ``--background`` lowers
the queue's priority below every other session's: ``nice`` alone does not, where the kernel groups
processes by session (autogroup), so the session's group is lowered too. Ctrl-C stops it; every
training goes on from its last saved state the next time.
"""

from __future__ import annotations

import argparse
import fcntl
import multiprocessing
import os
import queue as queues
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.interrupts import die_with_parent
from harness.policies.world_learners import has_episodes
from studies.silgpo import MODELS, agent, sweeps

EPISODES = 2000  # the authors' max_train_episodes is 20,000; their logged agent converged by 1,560
GROUPS = ("ranking", "paper", "light", "ablations", "sweeps", "longer")
PLAYED = ("ranking", "paper", "ablations")  # the groups whose weights the study loads again (and so keeps)
NOT_KEPT = ".not-kept"  # what a continuation trained anew leaves when it does not repeat the kept curve
WORK = Path(os.environ.get("HARNESS_SILGPO_TRAININGS", "~/.cache/harness/silgpo-trainings")).expanduser()


@dataclass(frozen=True)
class Job:
    group: str
    learner: str
    path: Path  # where the study reads the finished model (in --models)
    argv: list[str]
    goes_on_from: int = 0  # a finished model's episodes this job continues from (its state saved there)
    anew: bool = False  # ... or, with none saved, trains from the start (kept if it repeats those episodes)

    def episodes(self) -> int:
        return sweeps.episodes_in(self.argv)

    def at(self, models: Path, work: Path) -> Path:
        """Where this job trains: the same name below the work folder."""
        return work / self.path.relative_to(models)

    def done(self, models: Path, work: Path) -> bool:
        return has_episodes(self.path, self.episodes()) or has_episodes(self.at(models, work), self.episodes())

    def key(self) -> tuple[str, Path]:
        """Which job this is (a continuation shares its recipe model's path)."""
        return self.group, self.path

    def not_kept(self, models: Path, work: Path) -> bool:
        """A continuation trained anew that did not repeat the kept curve (its files moved aside
        as ``<name>.not-kept.*``): not done, and not trained again."""
        return self.at(models, work).with_suffix(NOT_KEPT + ".json").exists()

    def stranded(self, models: Path, work: Path) -> bool:
        """A continuation with no state saved where it goes on from (a fresh machine), not to be
        trained anew: passed by."""
        return bool(self.goes_on_from) and not self.anew and \
            agent.saved_episode(self.at(models, work)) < self.goes_on_from


def jobs(models: Path = MODELS, groups=GROUPS, anew: bool = False) -> list[Job]:
    """The queue, in order (a GAT seed and an RSDQL seed in turns: two lanes train one of each);
    ``anew``: a continuation with no state saved trains from the start."""
    out: list[Job] = []
    if "ranking" in groups:
        for seed in range(1, 6):
            out.append(Job("ranking", "sil-gpo", *agent.model(models, EPISODES, "gat", "auto", False, seed)))
            out.append(Job("ranking", "rsdql-deploy", *agent.rsdql_model(models, EPISODES, "mlp", seed)))
    if "paper" in groups:  # each seed beside its control without SIL: a pair answers what SIL does there
        for seed in range(1, 4):
            for sil in ("auto", "off"):
                out.append(Job("paper", "sil-gpo", *agent.model(models, EPISODES, "gat", sil, False, seed, paper_form=True)))
    if "light" in groups:
        for seed in range(1, 4):
            out.append(Job("light", "sil-gpo", *agent.light_model(models, seed)))
    if "ablations" in groups:
        for seed in range(1, 4):
            for encoder, sil in (("gat", "off"), ("gat", "on"), ("mlp", "auto")):
                out.append(Job("ablations", "sil-gpo", *agent.model(models, EPISODES, encoder, sil, False, seed)))
    if "sweeps" in groups:
        folder = models / sweeps.AGENT_DIR.relative_to(MODELS)
        for k in range(3):  # instance by instance: every point's first instance (their code's own) before any second
            for figure, value in sweeps.distinct_points():
                path, argv = sweeps.agent_model(figure, value, k, folder, sweeps.RECIPE)
                if path.parent != folder:  # the ranking's seed 1 (sweeps.agent_model): trained there
                    continue
                out.append(Job("sweeps", "sil-gpo", path, argv))
    if "longer" in groups:  # listed once its recipe's model is done (main asks again as each training ends)
        from harness.families.silgpo.agent import Curve

        for job in jobs(models, ("sweeps",)):
            if has_episodes(job.path, job.episodes()) and sweeps.late(Curve.read(job.path), job.episodes()):
                argv = sweeps.longer_flags(" ".join(job.argv)).split()
                out.append(Job("longer", "sil-gpo", job.path, argv, goes_on_from=job.episodes(), anew=anew))
    return out


def up_next(queue: list[Job], tried: set, models: Path = MODELS, work: Path = WORK) -> list[Job]:
    """The jobs to train, in order: not done, not passed by, not already tried in this run
    (``Job.key``); those begun first, as their state lives only in the work folder (a fresh machine
    loses it), then in the queue's order."""
    todo = [job for job in queue if job.key() not in tried and not has_episodes(job.path, job.episodes())
            and not job.stranded(models, work) and not job.not_kept(models, work)]
    return sorted(todo, key=lambda job: agent.saved_episode(job.at(models, work)) == 0)


def standing(job: Job, models: Path = MODELS, work: Path = WORK) -> str:
    """done, at episode N (its last saved state), not started, or passed by (a continuation with
    nothing saved to go on from)."""
    if job.done(models, work):
        return "done"
    if job.not_kept(models, work):
        return f"trained anew, not kept: its first {job.goes_on_from:,} episodes differ from the kept curve's"
    if job.stranded(models, work):
        return f"passed by: no state saved at episode {job.goes_on_from:,}"
    return agent.standing(job.at(models, work))


def left(queue: list[Job], models: Path = MODELS, work: Path = WORK) -> str:
    """How much of the queue is done, the episodes left, and the lane-hours they would take at the
    pace (seconds per episode, one lane) of the done trainings of their group, or of all where none
    of theirs is done (a bigger instance takes longer an episode: a rough guide); the continuations
    that will be passed by, or were trained anew and not kept, are not counted as left."""
    import json

    done = [job for job in queue if job.done(models, work)]
    not_kept = [job for job in queue if job not in done and job.not_kept(models, work)]
    stranded = [job for job in queue if job not in done and job not in not_kept and job.stranded(models, work)]
    rest = [job for job in queue if job not in done and job not in stranded and job not in not_kept]
    todo = [(job, job.episodes() - agent.saved_episode(job.at(models, work))) for job in rest]
    pace: dict[str, list[float]] = {}
    for job in done:
        meta = job.path.with_suffix(".json")
        if meta.exists() and (m := json.loads(meta.read_text())).get("seconds"):
            pace.setdefault(job.group, []).append(m["seconds"] / m["args"]["episodes"])
    line = f"{len(done)} of {len(queue)} done; {sum(n for _, n in todo):,} episodes left in {len(rest)} trainings"
    if everyone := [p for ps in pace.values() for p in ps]:
        seconds = sum(n * float(np.mean(pace.get(job.group, everyone))) for job, n in todo)
        line += f", about {seconds / 3600:.0f} lane-hours at the pace of the done ones"
    if stranded:
        line += f"; {len(stranded)} passed by (no state saved to go on from)"
    if not_kept:
        line += f"; {len(not_kept)} trained anew, not kept"
    return line


KEPT = (".json", ".curve.csv")


def run(job: Job, models: Path = MODELS, work: Path = WORK) -> tuple[Job, str, float]:
    """Train (or resume, or keep) one model in this process, in the work folder; copy what the
    study reads into ``models``; (job, what happened, seconds)."""
    import shutil

    from harness.policies import world_learners

    at = job.at(models, work)  # torch's threads: the learners pin them (learners.TRAINING_THREADS)
    at.parent.mkdir(parents=True, exist_ok=True)
    with open(at.with_suffix(".lock"), "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return job, "passed by: another process trains it", 0.0
        if has_episodes(job.path, job.episodes()):  # under the lock: another process may have just finished it
            return job, "done already", 0.0
        if job.stranded(models, work):  # a fresh machine: none saved
            return job, (f"passed by: no state saved at episode {job.goes_on_from:,} to go on from (--anew "
                         f"trains it from the start, kept if it repeats the kept curve)"), 0.0
        if job.not_kept(models, work):
            return job, standing(job, models, work), 0.0
        was = agent.standing(at)
        t = time.monotonic()

        def progress(episode, total, delay):
            if episode % 100 == 0:
                print(f"  {job.path.stem}: episode {episode}/{total}, evaluated {delay:.3f}", flush=True)
        print(f"{job.path.stem}: {was}, training", flush=True)
        world_learners.trained(job.learner, job.argv, at, progress)
        if job.goes_on_from and not same_start(at, job.path, job.goes_on_from):
            for suffix in (".ckpt", ".pt", ".curve.csv", ".curve.png", ".json"):  # .json last: it says "not kept"
                if at.with_suffix(suffix).exists():
                    at.with_suffix(suffix).replace(at.with_suffix(NOT_KEPT + suffix))
            return job, f"trained, not kept: its first {job.goes_on_from:,} episodes differ from the kept curve's", 0.0
        job.path.parent.mkdir(parents=True, exist_ok=True)
        for suffix in (*(s for s in KEPT if s != ".json"), *((".pt",) if job.group in PLAYED else ()), ".json"):
            shutil.copyfile(at.with_suffix(suffix), job.path.with_suffix(suffix))  # .json last: it says "done"
        return job, f"trained ({was} before)", time.monotonic() - t


def same_start(trained: Path, kept: Path, episodes: int) -> bool:
    """Whether two models' curves agree over their first ``episodes``: a model gone on keeps the
    evaluations the figures read."""
    from harness.families.silgpo.agent import Curve

    a, b = (Curve.read(p) for p in (trained, kept))
    return [(e, d) for e, d in zip(a.episodes, a.delay) if e <= episodes] == \
        [(e, d) for e, d in zip(b.episodes, b.delay) if e <= episodes]


def background() -> str:
    """Lower this process (and its lanes) below every other session; what was done."""
    os.nice(19)
    group = Path("/proc/self/autogroup")
    try:
        group.write_text("19")
        return "nice 19, its session's group too"
    except OSError:
        return "nice 19"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lanes", type=int, default=2, help="trainings at once (one core each)")
    ap.add_argument("--only", default=",".join(GROUPS), help=f"groups to work through, of {', '.join(GROUPS)}")
    ap.add_argument("--models", type=Path, default=MODELS, help="where the finished models are kept (the study's)")
    ap.add_argument("--work", type=Path, default=WORK, help="where trainings run and keep their state (not the "
                                                            "repository; $HARNESS_SILGPO_TRAININGS)")
    ap.add_argument("--list", action="store_true", help="print each job and where it stands, then what is left "
                                                        "(episodes, lane-hours at the done ones' pace); train nothing")
    ap.add_argument("--background", action="store_true", help="yield the CPU to every other session")
    ap.add_argument("--anew", action="store_true", help="a continuation (group longer) with no state saved to go "
                                                        "on from trains from the start instead of being passed by; "
                                                        "kept only if it repeats the kept curve")
    args = ap.parse_args()
    groups = args.only.split(",")
    if unknown := set(groups) - set(GROUPS):
        print(f"--only: {', '.join(sorted(unknown))} is not a group; the groups: {', '.join(GROUPS)}", file=sys.stderr)
        return 2
    queue = jobs(args.models, groups, args.anew)
    if args.list:
        for job in queue:
            print(f"{job.group:9s} {job.path.stem:44s} {standing(job, args.models, args.work)}")
        print(left(queue, args.models, args.work))
        return 0
    done = [job for job in queue if has_episodes(job.path, job.episodes())]
    passed = [job for job in queue if job not in done and job.stranded(args.models, args.work)]
    print(f"{len(queue)} models, {len(done)} done, {len(queue) - len(done) - len(passed)} to train in {args.lanes} "
          f"lane(s)" + (f", {len(passed)} passed by (no state saved to go on from; --anew trains them)" if passed else "")
          + (f"; {background()}" if args.background else ""), flush=True)
    t0, tried, running, finished = time.monotonic(), set(), 0, queues.SimpleQueue()
    # one training per process: a compiled net's caches and a run's memory go with it
    with multiprocessing.get_context("spawn").Pool(args.lanes, maxtasksperchild=1, initializer=die_with_parent) as pool:
        while True:  # the queue asked again as each training ends: a late model goes on while its state is here
            for job in up_next(jobs(args.models, groups, args.anew), tried, args.models, args.work)[:args.lanes - running]:
                tried.add(job.key())
                running += 1
                pool.apply_async(run, (job, args.models, args.work), callback=finished.put, error_callback=finished.put)
            if not running:
                return 0
            ended, running = finished.get(), running - 1
            if isinstance(ended, BaseException):
                raise ended
            job, what, seconds = ended
            print(f"{job.path.stem}: {what} in {seconds:.0f} s ({time.monotonic() - t0:.0f} s so far)", flush=True)


if __name__ == "__main__":
    sys.exit(main())
