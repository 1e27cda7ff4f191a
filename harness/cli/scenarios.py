"""harness scenarios: the built-in scenarios, one line each."""

from __future__ import annotations

import typer

from harness.cli.main import app


@app.command()
def scenarios(json_out: bool = typer.Option(False, "--json", help="Print the built-in scenarios as JSON: a list "
                                            "of {name, description, app, duration_s, file}.")) -> None:
    """List the built-in scenarios (give 'harness run' a name from here, or a scenario file's path) and
    what a scenario file may contain: load shapes, several apps and loads, faults, the autoscaler,
    replica schedules and request streams. A scenario of a family's own world (world: servicegraph)
    says so; 'harness run' plays it with that world's policies."""
    from harness.scenarios.catalog import builtin_names, load_any_scenario

    if json_out:
        from harness.cli.output import print_json

        out = []
        for name in builtin_names():
            sc, path = load_any_scenario(name)
            out.append({"name": name, "description": sc.description, "world": getattr(sc, "world", "cluster"),
                        "app": getattr(sc, "app", None), "duration_s": sc.duration_s, "file": path})
        print_json(out)
        return
    for name in builtin_names():
        sc, _ = load_any_scenario(name)
        world = getattr(sc, "world", "cluster")
        print(f"{name:15s} {sc.description}" + ("" if world == "cluster" else f" [world: {world}]"))
    from harness import faults

    print(SHAPES.format(kinds="|".join(sorted(faults.load_all()))))


SHAPES = """
What a scenario file may use (harness/scenarios/*.yaml are examples; docs/scenarios.md has the details):
  load: {{mode: closed|open|periodic|trace, steps: [{{at_s, value}}], steps_file: rates.csv,
         trace_file: mubench-workload.json, entry: SERVICE-or-APP, client: NODE}}   (or a list of loads)
  app: NAME or [NAME, NAME]          several apps deployed together, services named <app>-<service>
  faults: [{{at_s, kind: {kinds}, ...}}]
  autoscaling: {{enabled, target_cpu, ...}}    the Kubernetes HPA on CPU
  replica_schedule: {{cycle_s, cycles: [{{SERVICE: REPLICAS, ...}}, ...]}}   fixed counts per cycle
  request_stream: {{service (or a list), rate_per_s, mean_lifetime_s, replicas: [MIN, MAX]}}   deployment requests
  world: servicegraph, instance: authors|seed-N, setting, load: {{busiest_rho | rate_scale}}   SIL-GPO's world instead"""
