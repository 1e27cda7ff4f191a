"""What the commands' options share: the one vocabulary (``--app FILE``, ``--policy a,b``,
``--seeds N --seed S``), and the old names kept, hidden, for old scripts."""

from __future__ import annotations

from pathlib import Path

import typer
from typer.core import TyperCommand

from harness.errors import UserError

# what evaluate and sweep compare when --policy is not given
SIM_POLICIES = "reach,rsdql,default,cloud-first,latency-greedy,rollout,optimal"

POLICY_HELP = "Comma-separated policies: registered names (harness policies) or package.module:Class."
SEEDS_HELP = "How many seeds: runs per policy, the same seeds for every policy."
SEED_HELP = "The first seed (--seeds N plays seeds S..S+N-1)."


def renamed(ctx: typer.Context, param: str, old_param: str):
    """The value of option ``param``, or of ``old_param`` — its old name, hidden — when only that
    was given; both given is an error naming the old one."""
    given = {p: ctx.get_parameter_source(p).name != "DEFAULT" and ctx.params[p] is not None
             for p in (param, old_param)}
    if given[param] and given[old_param]:
        raise UserError(f"given twice: {_flag(ctx, old_param)} is the old name of {_flag(ctx, param)}",
                        field=_flag(ctx, old_param))
    return ctx.params[old_param] if given[old_param] else ctx.params[param]


def _flag(ctx: typer.Context, param: str) -> str:
    return next(p.opts[0] for p in ctx.command.params if p.name == param)


def app_file(option: Path | None, positional: Path | None) -> Path:
    """The app of deploy, profile and calibrate: ``--app FILE``, or the positional APP_FILE of old
    scripts (hidden); one of the two."""
    if option is not None and positional is not None:
        raise UserError(f"the app given twice ({positional} and --app {option}): give --app FILE alone", field="--app")
    if option is None and positional is None:
        raise UserError("give the app: --app FILE (a μBench workmodel JSON)", field="--app")
    return option if option is not None else positional


class OldPositional(TyperCommand):
    """A command with a positional argument kept hidden for old scripts: left out of the usage
    line as well as the help (typer leaves it in the usage line)."""

    def collect_usage_pieces(self, ctx) -> list[str]:
        hidden = {piece for p in self.get_params(ctx) if p.param_type_name == "argument" and getattr(p, "hidden", False)
                  for piece in p.get_usage_pieces(ctx)}
        return [piece for piece in super().collect_usage_pieces(ctx) if piece not in hidden]


def named(kind: str):
    """A typer callback: the file a user gave for ``--app``, ``--profile`` or ``--inventory`` as
    ``harness.shipped.user_file`` reads it (a path is theirs; a bare name, harness's file)."""
    from harness import shipped

    def convert(value):
        return None if value is None else shipped.user_file(value, kind)
    return convert
