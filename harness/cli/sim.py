"""predict (and later train, evaluate): the simulator's commands."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from harness.cli.main import app


@app.command()
def predict(
    ctx: typer.Context,
    app_file: Path = typer.Option(..., "--app", help="App JSON."),
    profile: Path = typer.Option(..., "--profile", help="Profile JSON from 'harness profile'."),
    placement: Path = typer.Option(..., "--placement", help="YAML/JSON: service -> [node, ...], one per replica."),
    testbed: Optional[Path] = typer.Option(None, "--testbed", help="Testbed state file for nodes and RTTs "
                                           "(default: the profile's)."),
    rtt: str = typer.Option("measured", help="Which RTT matrix: measured or configured."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Predict the app's end-to-end latency for a placement with REACH's model (eqs. 2-9), with the
    breakdown: per service execution (T_E) and processing (T_S) time, per call the network time (D_S)."""
    from harness.errors import UserError
    from harness.sim.topology import model_for
    from harness.spec.app import load_app
    from harness.spec.loader import load_model
    from harness.spec.placement import load_placement
    from harness.spec.profile import load_profile
    from harness.spec.testbed_state import TestbedState

    if rtt not in ("measured", "configured"):
        raise UserError("--rtt must be 'measured' or 'configured'")
    a = load_app(app_file)
    prof = load_profile(profile)
    state = load_model(TestbedState, testbed) if testbed else None
    model = model_for(a, prof, state, rtt, source=str(profile))
    plan = load_placement(placement, a, list(model.topo.nodes))
    out = model.predict(plan)
    if json_out:
        print(json.dumps(out, indent=2))
        return
    print(f"predicted end-to-end latency: {out['latency_ms']:.2f} ms (user -> gateway {out['gateway_ms']:.2f} ms)")
    print(f"{'service':12s} {'nodes':28s} {'T_E ms':>9s} {'T_S ms':>9s}")
    for s, v in out["services"].items():
        print(f"{s:12s} {','.join(plan[s]):28s} {v['T_E_ms']:9.2f} {v['T_S_ms']:9.2f}")
    for e in out["edges"]:
        print(f"call {e['caller']} -> {e['callee']}: D_S {e['D_S_ms']:.2f} ms")


@app.command()
def train(
    app_file: Path = typer.Option(..., "--app", help="App JSON."),
    profile: Path = typer.Option(..., "--profile", help="Profile JSON."),
    testbed: Optional[Path] = typer.Option(None, "--testbed", help="Testbed state file (default: the profile's nodes)."),
    policy: str = typer.Option("reach", help="Learned policy to train: reach (PPO) or rsdql (DQN)."),
    steps: int = typer.Option(300_000, help="Environment steps."),
    seed: int = typer.Option(1, help="Seed of the environments and the network."),
    move_penalty: float = typer.Option(2.0, min=0, help="Reward penalty per move (REACH eq. 11; Table V: 2)."),
    ent_coef: float = typer.Option(0.0, "--ent-coef", min=0, help="PPO entropy coefficient (reach only; Table V: 0)."),
    failed_at_start: float = typer.Option(0.0, "--failed-at-start", min=0, max=1,
                                          help="Share of episodes that start with 1-2 nodes down and the pods on the "
                                          "others: where the live rescheduler acts after a node failure."),
    large_share: float = typer.Option(0.0, "--large-share", min=0, max=1,
                                      help="Share of episodes with the most replicas per service (5): large deployments "
                                      "need long runs of coordinated moves that uniform draws give too rarely."),
    out: Path = typer.Option(Path("models"), help="Folder for <policy>-<app>.pt, its metadata and learning curve."),
) -> None:
    """Train a rescheduling policy in CEEnv (the simulator built from the app, the profile and the
    testbed); writes the model with its metadata and a learning curve (CSV and PNG)."""
    import time

    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    from harness.errors import UserError
    from harness.policies import reach, rsdql
    from harness.rl.curves import write_curve
    from harness.sim.ceenv import EnvConfig, load_dynamics

    trainable = {"reach": (reach, reach.ReachArgs), "rsdql": (rsdql, rsdql.RsdqlArgs)}
    if policy not in trainable:
        raise UserError(f"cannot train {policy!r}; trainable: {', '.join(trainable)}", field="--policy")
    module, args_type = trainable[policy]
    a, prof, dyn = load_dynamics(app_file, profile, testbed, EnvConfig(
        move_penalty=move_penalty, failed_at_start=failed_at_start, large_share=large_share))
    args = args_type(total_steps=steps, seed=seed, **({"ent_coef": ent_coef} if policy == "reach" else {}))
    try:
        args.validate()
    except ValueError as exc:
        raise UserError(str(exc), field="--steps") from None
    t = time.monotonic()
    with Progress(TextColumn(f"training {policy}"), BarColumn(), TextColumn("{task.completed:,}/{task.total:,} steps"),
                  TextColumn("return {task.fields[ret]:.1f}"), TimeElapsedColumn(), TimeRemainingColumn()) as bar:
        task = bar.add_task("train", total=steps, ret=0.0)
        net, curve = module.train(dyn, args, lambda s, r: bar.update(task, completed=s, ret=r))
    meta = module.metadata(dyn, args, a.name, str(profile), prof.testbed, curve)
    path = out / f"{policy}-{a.name}.pt"
    module.save(net, meta, path)
    write_curve(curve, path.with_suffix(".curve.csv"), path.with_suffix(".curve.png"), f"{policy} on {a.name}")
    print(f"trained in {time.monotonic() - t:.0f}s; final mean return {curve[-1][1]:.1f}; wrote {path} "
          f"(+ .json metadata, .curve.csv, .curve.png)")


@app.command()
def evaluate(
    app_file: Path = typer.Option(..., "--app", help="App JSON."),
    profile: Path = typer.Option(..., "--profile", help="Profile JSON."),
    testbed: Optional[Path] = typer.Option(None, "--testbed"),
    policies: str = typer.Option("reach,rsdql,default,cloud-first,latency-greedy,optimal", help="Comma-separated policies."),
    pods: str = typer.Option("4,12,20", help="Comma-separated pod counts (split evenly over the services)."),
    scenarios: int = typer.Option(10, help="Scenarios (seeded background loads) per pod count."),
    model_dir: Path = typer.Option(Path("models"), help="Where trained models are (<policy>-<app>.pt)."),
    out: Optional[Path] = typer.Option(None, help="Also write the results here as CSV (JSON beside it)."),
) -> None:
    """Predicted latency, moves and moved-pod share per policy and size, in simulation (REACH Fig. 8)."""
    from dataclasses import asdict

    from harness.errors import UserError
    from harness.policies import build_for_app
    from harness.rescheduler.evaluate import run_policy, write_results
    from harness.sim.ceenv import load_dynamics

    a, _, dyn = load_dynamics(app_file, profile, testbed)
    built = {}
    for ref in (p.strip() for p in policies.split(",") if p.strip()):
        policy = build_for_app(ref, a.name, app_file, profile, model_dir)
        built[policy.name] = policy
    names = list(built)
    try:
        sizes = [int(x) for x in pods.split(",")]
    except ValueError:
        raise UserError("--pods takes comma-separated whole numbers") from None
    rows = []
    print(f"{'policy':15s} {'pods':>4s} {'latency ms':>11s} {'moves':>6s} {'moved':>6s}")
    for size in sizes:
        for n in names:
            r = run_policy(dyn, built[n], n, size, list(range(scenarios)))
            if r is None:
                print(f"{n:15s} {size:4d} {'too large':>11s}")
                continue
            rows.append(r)
            print(f"{n:15s} {size:4d} {r.latency_ms:11.2f} {r.moves:6.1f} {r.moved_share:6.0%}")
    if out:
        write_results([asdict(r) for r in rows], out)
        print(f"wrote {out} and {out.with_suffix('.json')}")
