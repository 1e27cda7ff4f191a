"""harness generate: a continuum, an app or a day's load of any size, as the ordinary files
(harness.generators)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from harness.cli.main import app

generate = typer.Typer(help="Generate a continuum (inventory), an app (workmodel and its modelled profile) or a "
                            "day's load (scenario), seeded, as files every other command reads.",
                       no_args_is_help=True)
app.add_typer(generate, name="generate")

SEED_HELP = "The seed: the same arguments and seed give the same file."
JSON_HELP = "Print what was written as JSON: {file, kind, summary} (and profile for an app)."


def _positive(value: float, flag: str, least: float = 1) -> None:
    from harness.errors import UserError

    if value < least:
        raise UserError(f"must be ≥ {least:g}, got {value:g}", field=flag)


def _name(value: str) -> str:
    from harness.errors import UserError
    from harness.spec.names import check_name

    try:
        return check_name(value)
    except ValueError as exc:
        raise UserError(str(exc), field="--name") from None


def _done(json_out: bool, written: list[tuple[Path, str]], summary: dict) -> None:
    if json_out:
        from harness.cli.output import print_json

        (path, kind), *rest = written
        out = {"file": str(path), "kind": kind, "summary": summary}
        out.update({k: str(p) for p, k in rest})
        print_json(out)
        return
    for path, kind in written:
        print(f"wrote {path} ({kind})")
    print(", ".join(f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}" for k, v in summary.items()))


@generate.command("inventory")
def inventory(
    nodes: int = typer.Option(..., "--nodes", help="Placement nodes (cloud 10 %, fog 30 %, edge 60 %); at least 3."),
    seed: int = typer.Option(0, "--seed", help=SEED_HELP),
    name: str = typer.Option("continuum", "--name", help="The inventory's (testbed's) name, in profiles' file names."),
    clients: int = typer.Option(1, "--clients", help="Client nodes, where the users are."),
    edge_sites: Optional[int] = typer.Option(None, "--edge-sites", help="Edge sites (default √ of the edge nodes); "
                                             "fog sites a quarter of them, cloud regions a fifth of those."),
    out: Optional[Path] = typer.Option(None, "--out", help="The file (default inventories/<name>.yaml)."),
    json_out: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """A cloud-edge continuum of NODES nodes over tiers and sites, with node types, costs and RTTs
    per tier and site pair (harness/generators/continuum.py says every number). More than 250
    nodes is for harness evaluate: the local testbed holds 250."""
    from harness.generators.continuum import Shape, continuum
    from harness.generators.files import save

    _positive(nodes, "--nodes", 3)
    _positive(clients, "--clients")
    if edge_sites is not None:
        _positive(edge_sites, "--edge-sites")
    _name(name)
    doc = continuum(nodes, seed, name, clients, Shape(edge_sites=edge_sites))
    path = save(doc, out or Path("inventories") / f"{name}.yaml")
    sites = {n["site"] for n in doc["nodes"] if n.get("site")}
    _done(json_out, [(path, "inventory")], {"nodes": nodes, "clients": clients, "sites": len(sites),
                                            "links": len(doc["links"]), "node_types": len(doc["node_types"])})


@generate.command("app")
def app_(
    services: int = typer.Option(..., "--services", help="Services (the gateway s0 and the rest); at least 2."),
    pods: Optional[int] = typer.Option(None, "--pods", help="Pods in all, by each service's share of the requests "
                                       "(default one per service)."),
    seed: int = typer.Option(0, "--seed", help=SEED_HELP),
    name: str = typer.Option("generated", "--name", help="The app's name."),
    inventory: Optional[Path] = typer.Option(None, "--inventory", "-i", help="An inventory: the app's modelled "
                                             "profile on its node types is written too."),
    out: Optional[Path] = typer.Option(None, "--out", help="The app file (default workloads/<name>.json)."),
    profile_out: Optional[Path] = typer.Option(None, "--profile-out", help="The profile (default "
                                               "profiles/<name>.<testbed>.json, where harness evaluate looks)."),
    json_out: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """A μBench workmodel of SERVICES services whose call graph follows Alibaba's published
    statistics (heavy-tailed fan-out, tree-like, shared hot spots; harness/generators/callgraph.py
    cites the figures), and with --inventory its modelled profile there."""
    from harness.generators.callgraph import app as make_app
    from harness.generators.callgraph import stats
    from harness.generators.files import save

    _positive(services, "--services", 2)
    if pods is not None:
        _positive(pods, "--pods", services)
    _name(name)
    doc = make_app(services, seed, name, pods)
    written = [(save(doc, out or Path("workloads") / f"{name}.json"), "app")]
    if inventory is not None:
        from harness.generators.profile import modelled_profile
        from harness.spec.inventory import load_inventory

        inv = load_inventory(inventory)
        prof = modelled_profile(doc, inv.model_dump(mode="json"))
        written.append((save(prof, profile_out or Path("profiles") / f"{name}.{inv.name}.json"), "profile"))
    _done(json_out, written, stats(doc))


@generate.command("load")
def load(
    app_file: Path = typer.Option(..., "--app", help="The app the load goes to (a path, written into the scenario "
                                  "as given, or a shipped name)."),
    mean_rate: float = typer.Option(1.0, "--mean-rate", help="Requests/s on average over the run."),
    duration_s: float = typer.Option(86400.0, "--duration-s", help="The run's length; the day's shape is played "
                                     "over it (3600: a day in an hour)."),
    step_s: float = typer.Option(300.0, "--step-s", help="How often the rate changes."),
    seed: int = typer.Option(0, "--seed", help=SEED_HELP),
    name: str = typer.Option("day", "--name", help="The scenario's name (its run directories')."),
    out: Optional[Path] = typer.Option(None, "--out", help="The scenario file (default scenarios/<name>.yaml)."),
    json_out: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """A scenario whose open-loop load follows a day in the shape published for Azure Functions
    (diurnal over a constant half, bursty; harness/generators/day.py cites it), for --app."""
    from harness.generators.day import scenario
    from harness.generators.files import save

    for value, flag in ((mean_rate, "--mean-rate"), (duration_s, "--duration-s"), (step_s, "--step-s")):
        _positive(value, flag, 1e-9)
    _name(name)
    doc = scenario(str(app_file), mean_rate, seed, name, duration_s, step_s)
    path = save(doc, out or Path("scenarios") / f"{name}.yaml")
    rates = [s["value"] for s in doc["load"]["steps"]]
    _done(json_out, [(path, "scenario")], {"steps": len(rates), "mean_rate": mean_rate, "min_rate": min(rates),
                                           "max_rate": max(rates), "requests": round(mean_rate * duration_s)})
