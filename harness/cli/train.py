"""harness train: a learned policy trained in CEEnv; every field of its Args dataclass (and of
CEEnv's EnvConfig) is a flag."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from harness.cli.main import app
from harness.cli.options import named

@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []})
def train(
    ctx: typer.Context,
    app_file: Optional[Path] = typer.Option(None, "--app", callback=named("app"), help="App JSON."),
    profile: Optional[Path] = typer.Option(None, "--profile", callback=named("profile"), help="Profile JSON."),
    testbed: Optional[Path] = typer.Option(None, "--testbed", help="Testbed state file (default: the profile's nodes)."),
    policy: str = typer.Option("reach", help="Trainable policy (reach, rsdql, or package.module:Class; in worlds of "
                               "their own: sil-gpo, rsdql-deploy, ds-ppo, ds-dqn)."),
    out: Path = typer.Option(Path("models"), help="Folder for the model, its metadata and learning curve."),
    name: Optional[str] = typer.Option(None, help="Model file name without .pt (default: "
                                       "<policy>-<app>-seed<seed>-<utc time>)."),
    recipe: Optional[str] = typer.Option(None, help="A named set of the policy's flags (see --policy NAME --help); "
                                         "flags given after it override it."),
    force: bool = typer.Option(False, "--force", help="Replace a model of the same name."),
    resume: bool = typer.Option(False, "--resume", help="Go on with the stopped (or finished) training of the same "
                                "--name and flags from its <name>.ckpt, saved every 50 episodes (sil-gpo, "
                                "rsdql-deploy); "
                                "--episodes may grow."),
    show_help: bool = typer.Option(False, "--help", "-h", help="Show this message and the policy's own flags."),
) -> None:
    """Train a rescheduling policy in CEEnv (the simulator built from the app, the profile and the
    testbed), or a learner of a world of its own (sil-gpo and rsdql-deploy in SIL-GPO's deployment
    world, ds-ppo and ds-dqn in HephaestusForge's admission world: no app or profile); writes the model with
    its metadata and a learning curve (CSV and PNG). Every field of the policy's Args and of its
    environment's or world's settings is a flag (see --policy NAME --help); --steps is --total-steps."""
    import time

    from harness.errors import UserError
    from harness.policies import resolve
    from harness.policies.contract import Ability
    from harness.policies.learned import training_config, training_groups
    from harness.spec.args import flags_help

    from harness.policies import world_learners

    if policy in world_learners.names():  # its world is not CEEnv: no app or profile
        return _train_world(ctx, policy, out, name, force, show_help, resume)
    if resume:
        world_learners.not_resumable(policy)
    cls = resolve(policy)
    if Ability.TRAIN not in cls.abilities:
        from harness.policies import REGISTRY

        trainable = ", ".join([n for n, c in sorted(REGISTRY.items()) if Ability.TRAIN in c.abilities]
                              + list(world_learners.names()))
        raise UserError(f"cannot train {policy!r}; trainable: {trainable}", field="--policy")
    if show_help:
        print(ctx.get_help())
        print(f"\nFlags of --policy {cls.name}:\n" + flags_help(training_groups(cls), skip=("model",)))
        for rname, flags in getattr(cls, "recipes", {}).items():
            print(f"\nrecipe {rname}: {' '.join(flags)}")
        return
    if app_file is None or profile is None:
        raise UserError("--app and --profile are required", field="--app" if app_file is None else "--profile")
    args, env = training_config(cls, ctx.args, recipe)

    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    from harness.policies.learned import train_and_save
    from harness.sim.ceenv import load_dynamics

    a, prof, dyn = load_dynamics(app_file, profile, testbed, env)
    t = time.monotonic()
    with Progress(TextColumn(f"training {cls.name}"), BarColumn(), TextColumn("{task.completed:,}/{task.total:,} steps"),
                  TextColumn("return {task.fields[ret]:.1f}"), TimeElapsedColumn(), TimeRemainingColumn()) as bar:
        task = bar.add_task("train", total=args.total_steps, ret=0.0)
        path, curve = train_and_save(cls, dyn, args, a.name, str(profile), prof.testbed, out, name, force,
                                     lambda s, r: bar.update(task, completed=s, ret=r), recipe, prof)
    print(f"trained in {time.monotonic() - t:.0f}s; final mean return {curve[-1][1]:.1f}; wrote {path} "
          f"(+ .json metadata, .curve.csv, .curve.png)")


def _train_world(ctx: typer.Context, policy: str, out: Path, name: Optional[str], force: bool, show_help: bool,
                 resume: bool) -> None:
    """A learner of a world of its own (``harness.policies.world_learners``), with a progress bar."""
    import time

    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    from harness.policies import world_learners
    from harness.spec.args import flags_help

    if show_help:
        print(ctx.get_help())
        learner = world_learners._learners()[policy]
        print(f"\nFlags of --policy {policy} (world: {learner.world}):\n" + flags_help(world_learners.groups(learner)))
        return
    args, world, built = world_learners.parse(policy, ctx.args)
    t = time.monotonic()
    with Progress(TextColumn(f"training {policy}"), BarColumn(), TextColumn("{task.completed:,}/{task.total:,}"),
                  TextColumn("{task.fields[last]}"), TimeElapsedColumn(), TimeRemainingColumn()) as bar:
        task = bar.add_task("train", total=getattr(args, "episodes", getattr(args, "total_steps", 0)), last="")

        def progress(done: int, total: int, value: float) -> None:
            bar.update(task, completed=done, total=total, last=f"last {value:.3f}")

        path, meta = world_learners.train_and_save(policy, args, world, built, out, name, force, progress, resume)
    best = f"; best evaluated delay {meta['best_delay']:.3f}" if meta.get("best_delay") is not None else ""
    print(f"trained in {time.monotonic() - t:.0f}s{best}; wrote {path} (+ .json metadata, .curve.csv, .curve.png)")
