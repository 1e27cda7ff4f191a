"""Print every harness command's positional arguments and visible options as a markdown table.

One row per command (the root `harness` first, then the commands in the order of `harness --help`,
a group's commands each a row: `harness generate inventory`),
read from the typer app itself, so the table is whatever the code accepts now: hidden arguments and
options (old names kept for old scripts) are left out, and so is `-h/--help`.

    .venv/bin/python scripts/cli_options.py > options.md
"""

from __future__ import annotations

import sys


def _argument(param) -> str:
    name = (param.metavar or param.name).upper()
    if param.nargs == -1:
        name += " ..."
    return name if param.required else f"[{name}]"


def _option(param) -> str:
    return "/".join(f"`{o}`" for o in [*param.opts, *param.secondary_opts])


def row(name: str, command) -> str:
    visible = [p for p in command.params if not getattr(p, "hidden", False)]
    args = [_argument(p) for p in visible if p.param_type_name == "argument"]
    opts = [_option(p) for p in visible if p.param_type_name == "option" and "--help" not in p.opts]
    return f"| `{name}` | {' '.join(args) or '-'} | {', '.join(opts) or '-'} |"


def main() -> int:
    import typer.main

    from harness.cli.main import _register, app

    _register()
    root = typer.main.get_command(app)
    print("| command | positional | options |")
    print("|---|---|---|")
    print(row("harness", root))
    for name, command in root.commands.items():
        if getattr(command, "hidden", False):
            continue
        subcommands = getattr(command, "commands", None)  # a group (harness generate): a row per command
        if subcommands:
            for sub, c in subcommands.items():
                print(row(f"harness {name} {sub}", c))
        else:
            print(row(f"harness {name}", command))
    return 0


if __name__ == "__main__":
    sys.exit(main())
