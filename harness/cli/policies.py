"""harness policies: every policy harness knows, in every world, one line each."""

from __future__ import annotations

import typer

from harness.cli.main import app


@app.command()
def policies(json_out: bool = typer.Option(False, "--json", help="Print a list of {name, world, abilities, family, "
                                            "summary, models}."),
             world: str = typer.Option(None, "--world", help="Only the policies of this world: cluster, multicluster "
                                       "or servicegraph.")) -> None:
    """List every policy: its unique name (give it to --policy), the world it acts in (cluster: the
    one ground of evaluate, run and the leaderboard; multicluster: HephaestusForge's; servicegraph:
    SIL-GPO's), what it does (place, plan, admit, deploy, train), whose it is, and the committed
    models at hand. Where two worlds use one word, the other world's is NAME@WORLD."""
    from harness.errors import UserError
    from harness.policies.catalog import WORLDS, entries

    if world is not None and world not in WORLDS:
        raise UserError(f"--world: {world!r} is not one of {', '.join(WORLDS)}")
    rows = [e for e in entries() if world is None or e.world == world]
    if json_out:
        from harness.cli.output import print_json

        print_json([e.as_json() for e in rows])
        return
    from rich.table import Table

    from harness.cli.output import console

    table = Table(box=None, pad_edge=False)
    for col in ("name", "world", "does", "family", "models", "what it is"):
        table.add_column(col, overflow="fold")
    for e in rows:
        table.add_row(e.name, e.world, ",".join(e.abilities), e.family, str(len(e.models)) if e.models else "",
                      e.summary)
    console().print(table)
