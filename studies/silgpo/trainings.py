"""Every training SIL-GPO's study rests on, as one queue that a few lanes (processes) work through:
each model kept where done, resumed from its ``.ckpt`` where stopped, trained where missing, in
``studies/silgpo/models/`` (committed, so the hours of training outlive the machine; a model's
``.ckpt`` is dropped once it is done).

    .venv/bin/python -m studies.silgpo.trainings [--lanes 2] [--only ranking,ablations,sweeps] [--list] [--background]

The groups, in the order the lanes take them:

- ``ranking``: the default setting's five seeds of SIL-GPO (GAT, the code's SIL rule) and of
  RSDQL (MLP encoders), 2,000 episodes each, in turns (what ``studies.silgpo.agent --seeds 5``
  ranks);
- ``ablations``: GAT without SIL and PPO over MLP encoders, seeds 1-3, 2,000 episodes
  (``studies.silgpo.agent --sil off`` / ``--encoder mlp``);
- ``sweeps``: one model per point of Figs 8-10 and instance, the fast recipe
  (``studies.silgpo.sweeps --agent-dir``).

The names and flags are those scripts' own (``agent.model``, ``agent.rsdql_model``,
``sweeps.agent_model``), so they find what this trained. A model being trained is locked
(``<name>.lock``): a second queue, or a lane of this one, passes it by. ``--background`` lowers
the queue's priority below every other session's: ``nice`` alone does not, where the kernel groups
processes by session (autogroup), so the session's group is lowered too. Ctrl-C stops it; every
training goes on from its last saved state (every 50 episodes) the next time.
"""

from __future__ import annotations

import argparse
import fcntl
import multiprocessing
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from harness.policies.world_learners import has_episodes
from studies.silgpo import MODELS, agent, sweeps

EPISODES = 2000  # the authors' max_train_episodes is 20,000; their logged agent converged by 1,560
GROUPS = ("ranking", "ablations", "sweeps")


@dataclass(frozen=True)
class Job:
    group: str
    learner: str
    path: Path
    argv: list[str]

    def episodes(self) -> int:
        return int(self.argv[self.argv.index("--episodes") + 1])


def jobs(models: Path = MODELS, groups=GROUPS) -> list[Job]:
    """The queue, in order (a GAT seed and an RSDQL seed in turns: two lanes train one of each)."""
    out: list[Job] = []
    if "ranking" in groups:
        for seed in range(1, 6):
            out.append(Job("ranking", "sil-gpo", *agent.model(models, EPISODES, "gat", "auto", False, seed)))
            out.append(Job("ranking", "rsdql-deploy", *agent.rsdql_model(models, EPISODES, "mlp", seed)))
    if "ablations" in groups:
        for seed in range(1, 4):
            for encoder, sil in (("gat", "off"), ("mlp", "auto")):
                out.append(Job("ablations", "sil-gpo", *agent.model(models, EPISODES, encoder, sil, False, seed)))
    if "sweeps" in groups:
        folder = models / sweeps.AGENT_DIR.relative_to(MODELS)
        for figure, values in sweeps.SWEEPS.items():
            for value in values:
                for seed in range(3):
                    out.append(Job("sweeps", "sil-gpo", *sweeps.agent_model(figure, value, seed, folder, sweeps.FAST)))
    return out


def standing(job: Job) -> str:
    """done, at episode N (its last saved state), or not started."""
    if has_episodes(job.path, job.episodes()):
        return "done"
    return agent.standing(job.path)


def run(job: Job) -> tuple[Job, str, float]:
    """Train (or resume, or keep) one model in this process; (job, what happened, seconds)."""
    import torch

    from harness.policies import world_learners

    torch.set_num_threads(1)
    job.path.parent.mkdir(parents=True, exist_ok=True)
    with open(job.path.with_suffix(".lock"), "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return job, "passed by: another process trains it", 0.0
        if has_episodes(job.path, job.episodes()):  # under the lock: another process may have just finished it
            return job, "done already", 0.0
        was = agent.standing(job.path)
        t = time.monotonic()

        def progress(episode, total, delay):
            if episode % 100 == 0:
                print(f"  {job.path.stem}: episode {episode}/{total}, evaluated {delay:.3f}", flush=True)
        print(f"{job.path.stem}: {was}, training", flush=True)
        world_learners.trained(job.learner, job.argv, job.path, progress)
        # a finished model's state (6-7 MB of optimisers and buffers) serves no result, and the
        # repository carries the state of unfinished ones only
        job.path.with_suffix(".ckpt").unlink(missing_ok=True)
        return job, f"trained ({was} before)", time.monotonic() - t


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
    ap.add_argument("--models", type=Path, default=MODELS, help="where the models are kept")
    ap.add_argument("--list", action="store_true", help="print each job and where it stands; train nothing")
    ap.add_argument("--background", action="store_true", help="yield the CPU to every other session")
    args = ap.parse_args()
    groups = args.only.split(",")
    if unknown := set(groups) - set(GROUPS):
        print(f"--only: {', '.join(sorted(unknown))} is not a group; the groups: {', '.join(GROUPS)}", file=sys.stderr)
        return 2
    queue = jobs(args.models, groups)
    if args.list:
        for job in queue:
            print(f"{job.group:9s} {job.path.stem:44s} {standing(job)}")
        return 0
    todo = [job for job in queue if not has_episodes(job.path, job.episodes())]
    print(f"{len(queue)} models, {len(queue) - len(todo)} done, {len(todo)} to train in {args.lanes} lane(s)"
          + (f"; {background()}" if args.background else ""), flush=True)
    t0 = time.monotonic()
    # one training per process: a compiled net's caches and a run's memory go with it
    with multiprocessing.get_context("spawn").Pool(args.lanes, maxtasksperchild=1) as pool:
        for job, what, seconds in pool.imap_unordered(run, todo):
            print(f"{job.path.stem}: {what} in {seconds:.0f} s ({time.monotonic() - t0:.0f} s so far)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
