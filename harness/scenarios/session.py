"""A session: a scenario with several policies over several seeds, live on one testbed
(``harness run``) or in simulation (``harness evaluate SCENARIO``).

Policies take turns within each seed (a, b, a, b, ...), so a slow drift of the host's speed
falls on every policy alike; each run starts from a clean testbed (no pods, every node up, the
RTTs as configured). Results: ``<out>/<utc>-<scenario>/<policy>-s<seed>/`` per run
(``harness.seeds``), and ``comparison.csv`` / ``comparison.md`` beside them, rewritten after every
run.
"""

from __future__ import annotations

import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from harness import faults, shipped
from harness.errors import UserError
from harness.policies.contract import Policy
from harness.results import summary as summ
from harness.results.rundir import RunDir
from harness.scenarios.live import Live, LiveRun
from harness.scenarios.run import Plan
from harness.seeds import run_folder, seed_list
from harness.spec.app import App, app_to_json, compose, load_app
from harness.spec.profile import Profile, compose_profiles, load_profile
from harness.scenarios.catalog import app_path, load_any_scenario, load_scenario
from harness.spec.scenario import Scenario
from harness.spec.testbed_state import state_path
from harness.testbed.cluster import Cluster


@dataclass
class WorldSession:
    """A session of a scenario of a family's own world (``harness.scenarios.worlds``)."""

    scenario: object  # the world's scenario model (its ``world`` names the world)
    plays: dict  # policy label -> its decision, ready to play (harness.scenarios.world_run.Play)
    out: Path


@dataclass
class Session:
    scenario: Scenario
    scenario_file: str
    app: App
    app_file: Path
    profile: Profile
    profile_file: Path
    policies: dict[str, Policy]  # as named on the command line
    out: Path


def with_replicas(app: App, replicas: int | None) -> App:
    if replicas is None:
        return app
    services = {n: s.model_copy(update={"replicas": replicas}) for n, s in app.services.items()}
    return app.model_copy(update={"services": services})


def find_workloads(scenario: Scenario, override: Path | None) -> list[Path]:
    """The app file of each app the scenario names (a shipped name, or a path)."""
    if override:
        return [override]
    out = []
    for ref in scenario.apps():
        p = app_path(ref, Path("workloads"))
        out.append(p if p.is_absolute() or p.exists() else shipped.find(p))  # a user's own first, then harness's
    return out


def find_profile(app: App, testbed: str, override: Path | None) -> Path:
    if override:
        return override
    p = shipped.profile(app.name, testbed)
    if p.exists():
        return p
    raise UserError(f"no profile of '{app.name}' for testbed '{testbed}' (looked for profiles/{app.name}.{testbed}.json); "
                    f"make it with: harness profile workloads/{app.name}.json", field="--profile")


def check_scenario(sc: Scenario, sc_file: str, app: App, app_file: Path, state) -> None:
    """Everything the scenario names, against this app and testbed, before anything is deployed:
    faults' nodes and services, loads' entries and clients, a request stream's and a replica
    schedule's services, and the app's placement constraints."""
    faults.check_all(sc.faults, state.nodes, app, sc_file)
    check_loads(sc, app, state, sc_file)
    unknown = f"(services: {', '.join(app.services)})"
    for service in sc.request_stream.services if sc.request_stream is not None else []:
        if service not in app.services:
            raise UserError(f"unknown service {service!r} {unknown}", source=sc_file, field="request_stream.service")
    for i, cycle in enumerate(sc.replica_schedule.cycles if sc.replica_schedule else []):
        for service in cycle:
            if service not in app.services:
                raise UserError(f"unknown service {service!r} {unknown}", source=sc_file,
                                field=f"replica_schedule.cycles[{i}].{service}")
    app.check_nodes([n.name for n in state.nodes if n.role != "client"], str(app_file))
    check_room(app, app_file, state)


def check_room(app: App, app_file: Path, state) -> None:
    """The app's requests fit the testbed's nodes at all (summed; where each pod goes is the
    policy's business): found before deploying, not as pods that never start."""
    nodes = [n for n in state.nodes if n.role != "client"]
    for what, need, have, unit in (
            ("CPU", sum(app.cpu_request(s) * spec.replicas for s, spec in app.services.items()),
             sum(n.cpus for n in nodes), "cores"),
            ("memory", sum(app.memory_request(s) * spec.replicas for s, spec in app.services.items()) / 1024,
             sum(n.memory_gb for n in nodes), "GiB")):
        if need > have + 1e-9:
            raise UserError(f"the app requests {need:g} {unit} of {what} over {app.total_pods()} pods; the testbed's "
                            f"{len(nodes)} nodes have {have:g}", source=str(app_file), field="services")


def check_writable(folder: Path) -> None:
    """The results folder takes files (not read-only, not full to the last inode): checked
    before deploying, by writing and removing one small file."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".harness-probe-") as f:
            f.write(b"probe")
            f.flush()
    except OSError as exc:
        raise UserError(f"cannot write there: {exc.strerror or exc}", source=str(folder), field="--out") from None


def check_loads(sc: Scenario, app: App, state, source: str) -> None:
    """Every load's entry service, client node and trace services exist: found before deploying."""
    clients = [n.name for n in state.nodes if n.role == "client"]
    many = isinstance(sc.load, list)
    for i, load in enumerate(sc.loads()):
        where = f"load[{i}]" if many else "load"
        if app.resolve_entry(load.entry) is None:
            raise UserError(f"unknown service or app {load.entry!r} (entries: {', '.join(app.entry_services())}; "
                            f"services: {', '.join(app.services)})", source=source, field=f"{where}.entry")
        if load.client is not None and load.client not in clients:
            raise UserError(f"{load.client!r} is not a client node (client nodes: {', '.join(clients) or 'none'})",
                            source=source, field=f"{where}.client")
        for k, e in enumerate(load.trace):
            if e.service not in app.services:
                raise UserError(f"unknown service {e.service!r}", source=source, field=f"{where}.trace[{k}].service")


def build_policies(names: list[str], app: App, app_file: Path, profile_file: Path, model_dir: Path) -> dict:
    """Label -> policy: a module:Class reference runs under the name its class declares, one with
    arguments under that name and its arguments (two settings of one policy side by side)."""
    import sys

    from harness.policies import build_for_app, label

    out, notes = {}, []
    for ref in names:
        policy = build_for_app(ref, app.name, app_file, profile_file, model_dir, notes)
        out[label(ref, policy)] = policy
    for line in notes:  # a model of another profile: said before anything runs
        print(f"harness: note: {line}", file=sys.stderr)
    return out


def prepare(scenario_ref: str, policies: list[str], state, app_override: Path | None, profile_override: Path | None,
            model_dir: Path, results: Path, suffix: str = "", folder: str | None = None, loaded=None) -> Session:
    """Everything a session needs, checked against the testbed before anything runs; its results
    go to ``results/<utc>-<scenario><suffix>`` (or ``results/<folder>``)."""
    check_writable(results)
    sc, sc_file = loaded or load_scenario(scenario_ref)  # ``loaded``: (scenario, file) read already
    app_files = find_workloads(sc, app_override)
    apps = [with_replicas(load_app(f), sc.replicas) for f in app_files]
    app, app_file = compose(apps), app_files[0]  # several apps: deployed together as one, each its own entry
    check_scenario(sc, sc_file, app, app_file, state)
    profile_files = [profile_override] if profile_override else [find_profile(a, state.name, None) for a in apps]
    profile_file = profile_files[0]
    profile = compose_profiles(apps, [load_profile(f) for f in profile_files])
    built = build_policies(policies, app, app_file, profile_file, model_dir)
    return Session(sc, sc_file, app, app_file, profile, profile_file, built,
                   results / folder if folder else session_folder(results, sc.name, suffix))


def prepare_live(scenario_ref: str, policies: list[str], cluster: Cluster, app_override: Path | None,
                 profile_override: Path | None, model_dir: Path, results: Path) -> Session | WorldSession:
    """What ``harness run`` plays: a session of apps on the cluster (``prepare``), or of a family's
    own world when the scenario file names one (``world:``)."""
    sc, sc_file = load_any_scenario(scenario_ref)
    if isinstance(sc, Scenario):
        return prepare(scenario_ref, policies, cluster.state, app_override, profile_override, model_dir, results,
                       loaded=(sc, sc_file))
    from harness.scenarios import worlds

    for flag, given in (("--app", app_override), ("--profile", profile_override)):
        if given is not None:
            raise UserError(f"a scenario of the {sc.world} world has no app or profile", field=flag)
    check_writable(results)
    plays = worlds.get(sc.world).plays(sc, policies, model_dir, cluster)
    return WorldSession(sc, plays, session_folder(results, sc.name))


def session_folder(results: Path, scenario: str, suffix: str = "") -> Path:
    """``results/<utc>-<scenario><suffix>``: where a session's runs go."""
    return results / f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{scenario}{suffix}"


def run_world_session(cluster: Cluster, session: WorldSession, seeds: int = 1, first_seed: int = 0,
                      on_tick: Callable[[Live], None] | None = None,
                      on_done: Callable[[dict], None] | None = None) -> list[dict]:
    """A world's scenario played live for each seed and policy, the policies taking turns within
    each seed (seed k seeds the load); a run directory per policy and seed, the comparison beside."""
    import json

    import yaml

    from harness.scenarios.world_run import WorldLiveRun

    check_clean(cluster)
    rows: list[dict] = []
    testbed = yaml.safe_dump(cluster.state.model_dump(mode="json"), sort_keys=False)
    scenario_yaml = yaml.safe_dump(session.scenario.model_dump(mode="json"), sort_keys=False, allow_unicode=True)
    for seed in seed_list(seeds, first_seed):
        for name, play in session.plays.items():
            out = run_dir(session.out, name, seed, scenario_yaml, testbed,
                          {"deployment.json": json.dumps({"policy": name, "placement": play.placement()}, indent=1)},
                          play.model_file)
            summary = WorldLiveRun(cluster, session.scenario, name, play, seed, out, on_tick).run()
            done(rows, summary, out, session, on_done)
    return rows


def check_clean(cluster: Cluster) -> None:
    """The testbed as a run must find it: no app deployed, every node up, no process of an
    earlier run left; one UserError line saying how to get there otherwise."""
    if cluster.pods():
        raise UserError("an app is deployed; 'harness undeploy' first, so every policy starts from the same testbed")
    if down := [n.name for n in cluster.nodes if n.role != "client" and not cluster.node_up(n.name)]:
        raise UserError(f"nodes {', '.join(down)} are down (failed by a run that was killed); 'harness undeploy' "
                        "brings them back, so every policy runs on the whole testbed")
    if strays := cluster.stray_processes():
        where = ", ".join(f"{node} ({len(pids)})" for node, pids in strays.items())
        raise UserError(f"processes of an earlier run that was killed still run on the nodes ({where}); "
                        "'harness undeploy' stops them")


def run_session(cluster: Cluster, state, state_dir: Path, session: Session, seeds: int = 1, first_seed: int = 0,
                on_tick: Callable[[Live], None] | None = None, on_done: Callable[[dict], None] | None = None) -> list[dict]:
    """The session's scenario played live on ``cluster`` for each seed (``seeds`` of them from
    ``first_seed``: ``harness.seeds.seed_list``) and policy, the policies taking turns within each
    seed; the seed seeds the load generator. One run directory per policy and seed
    (``<policy>-s<seed>``) and the comparison beside them. A session of a family's own world
    is that world's (``run_world_session``)."""
    if isinstance(session, WorldSession):
        return run_world_session(cluster, session, seeds, first_seed, on_tick, on_done)
    check_clean(cluster)
    check_policies(session, state, cluster)
    rows: list[dict] = []
    testbed, scenario = state_path(state_dir).read_text(), Path(session.scenario_file).read_text()
    for seed in seed_list(seeds, first_seed):
        for name, policy in session.policies.items():
            out = new_run_dir(session, name, policy, seed, scenario, testbed)
            plan = Plan(session.scenario, session.app, session.profile, state, name, policy, seed=seed)
            done(rows, LiveRun(cluster, plan, out, on_tick).run(), out, session, on_done)
    return rows


def check_policies(session: Session, state, cluster: Cluster) -> None:
    """Each policy's own refusal of this cluster and app (``Policy.check``), before any run."""
    from harness.rescheduler.live import LiveView

    view, _ = LiveView(session.app, session.profile, state, cluster).view()
    for policy in session.policies.values():
        policy.check(view)


def new_run_dir(session: Session, name: str, policy: Policy, seed: int, scenario: str, testbed: str) -> RunDir:
    """A run directory ``<policy>-s<seed>`` with the run's inputs: app, scenario (``scenario``: the
    file's text), the testbed's state (``testbed``: its YAML), profile, policy and model, harness's version."""
    return run_dir(session.out, name, seed, scenario, testbed,
                   {"app.json": app_to_json(session.app), "profile.json": session.profile.model_dump_json(indent=1)},
                   Path(policy.model_file) if policy.model_file else None)


def run_dir(root: Path, name: str, seed: int, scenario: str, testbed: str, inputs: dict[str, str],
            model: Path | None) -> RunDir:
    """A run directory ``<root>/<policy>-s<seed>`` with its inputs: ``scenario.yaml``,
    ``testbed.yaml``, the world's own ``inputs`` (name -> text), ``policy.json`` (with the
    model's path and SHA-256) and ``harness.json``."""
    out = RunDir(root / run_folder(name, seed))
    out.save_input("scenario.yaml", scenario)
    out.save_input("testbed.yaml", testbed)
    for file, text in inputs.items():
        out.save_input(file, text)
    out.save_policy(name, model)
    out.save_harness(shipped.ROOT, sys.argv)
    return out


def done(rows: list[dict], summary: dict, out: RunDir, session: Session, on_done: Callable[[dict], None] | None) -> None:
    """A finished run into the session's rows and its comparison, and to the caller."""
    summary["run_dir"] = str(out.path)
    rows.append(summary)
    summ.write_comparison(rows, session.out / "comparison")
    if on_done:
        on_done(summary)


def run_simulated(state, session: Session, seeds: int, first_seed: int = 0,
                  on_done: Callable[[dict], None] | None = None, terminating_s: float = 0.0,
                  gap_time_limit_s: float = 0.0, variability: str = "drawn") -> list[dict]:
    """The session's scenario played in simulation (``harness.scenarios.simrun``) for each seed
    (``seeds`` of them from ``first_seed``: ``harness.seeds.seed_list``) and policy, on the testbed
    ``state`` describes (``harness.testbed.simulated.simulated_state``): one run directory per
    policy and seed (``<policy>-s<seed>``), the same files and summary as a live run's, and the
    comparison beside them. Seed k gives every policy the same arrivals.
    ``terminating_s``: how long a stopped pod holds its room (``SimCluster``); ``gap_time_limit_s``:
    paper 003's problem gets each run's optimality gap (``harness.families.rollout.cost_delay.score``);
    ``variability``: "drawn" (each request and pod its own draw: ``harness.sim.variability``) or
    "means" (every request at its placement's mean, pods at once: seeds of a closed loop alike)."""
    import yaml

    from harness.scenarios.simrun import SimRun
    from harness.testbed.simulated import SimCluster

    check_policies(session, state, SimCluster(state))
    rows: list[dict] = []
    testbed = yaml.dump(state.model_dump(mode="json"), Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper),
                        sort_keys=False)  # libyaml's: a ten-thousand-node testbed is seconds in Python
    scenario = Path(session.scenario_file).read_text()
    for seed in seed_list(seeds, first_seed):
        for name, policy in session.policies.items():
            out = new_run_dir(session, name, policy, seed, scenario, testbed)
            plan = Plan(session.scenario, session.app, session.profile, state, name, policy, seed=seed,
                        gap_time_limit_s=gap_time_limit_s, variability=variability)
            done(rows, SimRun(SimCluster(state, terminating_s), plan, out).run(), out, session, on_done)
    return rows
