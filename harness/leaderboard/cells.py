"""A leaderboard's cells and how they are played. A cell is one (track, app, scenario, seed): the
scenario played in simulation on the track's inventory for every policy that can join it, one run
directory per policy (``harness.scenarios.session.run_simulated``). A cell depends on nothing but
its inputs, so any executor gives the same rows: a local process pool (``run_cells``), or a Ray
cluster (``run_cells_on_ray``: each cell's run directories come back packed with its summaries,
so the results folder is the same wherever a cell ran); a failed cell is tried once more, then
reported. Either executor keeps a cell within its wall-clock budget, and stops at once when asked
(``stop``: Ctrl-C), the cells finished by then handed on, the others' workers killed.

Which policies join which track (``coverage``): every policy that places or plans (a placer
through the default rescheduling loop, a planner through the move loop), with its model for the
app where it learns; one without is listed as "no model", never dropped silently.
"""

from __future__ import annotations

import concurrent.futures as cf
import io
import multiprocessing
import os
import shutil
import tarfile
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from harness import shipped
from harness.interrupts import kill_pool
from harness.leaderboard.spec import SCENARIO_APPS, Leaderboard, Track

LIVE = "live"  # a live cell's failure key ends with it

if TYPE_CHECKING:
    from harness.spec.app import App

# what every run contributes to the long table: summary fields and placement metrics
METRIC_FIELDS = ("mean_ms", "p95_ms", "p99_ms", "errors", "requests", "moves", "moved_share", "recovery_s",
                 "policy_errors", "plan_timeouts", "edge_ratio", "cost", "gini_nodes", "rejection_rate",
                 "request_rejection_rate", "replica_cost", "gini_sites", "cost_delay_objective", "cost_delay_gap",
                 "cost_delay_over_cap", "total_delay", "total_delay_s", "unstable_queues")


@dataclass(frozen=True)
class Cell:
    track: str
    inventory: str | None
    app: str
    scenario: str
    seed: int
    policies: tuple[str, ...]
    terminating_s: float = 0.0
    profile: str | None = None  # the track's one profile file, if it names one
    gap_time_limit_s: float = 0.0
    world: str = "cluster"  # or a family's own world (harness.scenarios.worlds: "servicegraph", SIL-GPO's)

    @property
    def key(self) -> tuple:
        return self.track, self.app, self.scenario, self.seed


@dataclass
class Coverage:
    """Per track and policy: the apps it ran on, and why it sat out the others."""

    ran: dict[tuple[str, str], list[str]] = field(default_factory=dict)  # (track, policy) -> apps
    missing: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)  # (track, policy) -> app -> reason
    label: dict[str, str] = field(default_factory=dict)  # a policy as named in the file -> the name it declares
    to_train: dict[Path, tuple[str, ...]] = field(default_factory=dict)  # a missing model -> harness train's flags


def app_file(app: str) -> Path | None:
    """An app's file; None for the scenario's own apps."""
    if app == SCENARIO_APPS:
        return None
    return shipped.find(app) if app.endswith(".json") else shipped.workload(app)


def track_app(app: str, scenario: str) -> "App":
    """The app a cell deploys: the named one, or the scenario's own (composed when several)."""
    from harness.scenarios.catalog import load_scenario
    from harness.scenarios.session import find_workloads
    from harness.spec.app import compose, load_app

    if app != SCENARIO_APPS:
        return load_app(app_file(app))
    return compose([load_app(f) for f in find_workloads(load_scenario(scenario)[0], None)])


def policy_names(track: Track) -> list[str]:
    from harness.scenarios import worlds
    from harness.policies import names

    if track.policies:
        return list(track.policies)
    return names() if track.world == "cluster" else worlds.get(track.world).policy_names()


def coverage(board: Leaderboard, model_dir: Path) -> Coverage:
    """Who can join each track's apps: abilities first, then a learned policy's model."""
    from harness.policies import find_model, label, parse_ref, resolve, typed_args
    from harness.policies.contract import Ability

    from harness.spec.inventory import load_inventory

    cov = Coverage()
    for track in board.tracks:
        if track.world != "cluster":
            _world_coverage(track, cov, model_dir)
            continue
        inventory = load_inventory(shipped.find(track.inventory) if track.inventory else None)
        testbed = inventory.name
        unprofiled = set() if track.profile else \
            {app for app in track.apps if app != SCENARIO_APPS and not shipped.profile(Path(app).stem, testbed).exists()}
        deployed = {app: track_app(app, track.scenarios[0]) for app in track.apps}  # read once, asked per policy
        for name in policy_names(track):
            key = (track.name, name)
            cov.ran[key], cov.missing[key] = [], {}
            base, raw = parse_ref(name)
            cls = resolve(base)
            typed_args(cls, raw, name)  # a wrong argument: one line before any cell plays
            cov.label[name] = label(name, cls)
            for app in track.apps:
                if app in unprofiled:
                    cov.missing[key][app] = f"no profile of {Path(app).stem} on {testbed} (harness profile makes one)"
                    continue
                if not ({Ability.PLACE, Ability.PLAN} & set(cls.abilities)):
                    cov.missing[key][app] = "ability does not fit: neither places nor plans"
                    continue
                if (why := cls.unfit(deployed[app]) or cls.unfit_testbed(inventory)) is not None:
                    cov.missing[key][app] = f"ability does not fit: {why}"
                    continue
                if getattr(cls, "acts_with_a_users_file", False) and "model" not in raw:
                    cov.missing[key][app] = f"acts with a file of yours: {cls.name}[model=FILE]"
                    continue
                if Ability.TRAIN in cls.abilities and "model" not in raw and \
                        find_model(cls.name, deployed[app].name, model_dir) is None:
                    cov.missing[key][app] = f"no model for {deployed[app].name} (harness train makes one)"
                    if app != SCENARIO_APPS:  # a composed app has no file to train on
                        profile = shipped.find(track.profile) if track.profile else shipped.profile(Path(app).stem, testbed)
                        model = shipped.model(cls.name, deployed[app].name, model_dir)
                        cov.to_train[model] = ("--policy", base, "--app", str(app_file(app)), "--profile", str(profile),
                                               "--name", model.stem)
                    continue
                cov.ran[key].append(app)
    return cov


def _world_coverage(track: Track, cov: Coverage, model_dir: Path) -> None:
    """A track in a family's own world: its policies join every instance they have what they need for."""
    from harness.scenarios import worlds

    deployment = worlds.get(track.world)
    for name in policy_names(track):
        key = (track.name, name)
        cov.ran[key], cov.missing[key], cov.label[name] = [], {}, name
        for app in track.apps:
            why = next((w for s in track.scenarios if (w := deployment.missing(name, app, s, model_dir))), None)
            if why:
                cov.missing[key][app] = why
            else:
                cov.ran[key].append(app)
            if name in deployment.LEARNERS:
                for s in track.scenarios:
                    if not (model := deployment.model_file(name, app, s, model_dir)).exists():
                        cov.to_train[model] = tuple(deployment.train_argv(name, app, s, model_dir))


def check_policies(board: Leaderboard, file: Path) -> None:
    """Every policy a cluster track names exists and takes the arguments given: else one line
    naming ``file`` and the field (``tracks[i].policies[j]``), before a banner or a folder."""
    from harness.errors import UserError
    from harness.policies import parse_ref, resolve, typed_args

    for i, track in enumerate(board.tracks):
        if track.world != "cluster":
            continue
        for j, name in enumerate(track.policies or []):
            try:
                base, raw = parse_ref(name)
                typed_args(resolve(base), raw, name)
            except UserError as exc:
                raise UserError(exc.detail, source=str(file), field=f"tracks[{i}].policies[{j}]") from None


def cells(board: Leaderboard, cov: Coverage, seeds: list[int]) -> list[Cell]:
    """Every (track, app, scenario, seed) of ``seeds`` (``harness.seeds.seed_list``), with the policies joining it."""
    out = []
    for track in board.tracks:
        for app in track.apps:
            joined = tuple(n for n in policy_names(track) if app in cov.ran[(track.name, n)])
            for scenario in track.scenarios:
                for seed in seeds:
                    out.append(Cell(track.name, track.inventory, app, scenario, seed, joined, track.terminating_s,
                                    track.profile, track.gap_time_limit_s, track.world))
    return out


def session_for(cell: Cell, state, out: Path, model_dir: Path, folder: str):
    """The cell's session (``harness.scenarios.session``) with its joining policies, each built for
    the app the cell deploys and labelled as the file names it (module:Class under its declared name)."""
    from harness.policies import build_for_app, label
    from harness.scenarios.session import prepare

    app_path = app_file(cell.app)
    profile_path = shipped.find(cell.profile) if cell.profile else None
    session = prepare(cell.scenario, [], state, app_path, profile_path, model_dir, out / "runs", folder=folder)
    name = session.app.name if app_path is None else Path(cell.app).stem
    built = {ref: build_for_app(ref, name, app_path or session.app_file, session.profile_file, model_dir)
             for ref in cell.policies}
    session.policies = {label(ref, p): p for ref, p in built.items()}
    return session


def cell_folder(cell: Cell, live: bool = False) -> str:
    return f"{cell.track}/{Path(cell.app).stem}/{Path(cell.scenario).stem}" + (f"-live-s{cell.seed}" if live else "")


def play(cell: Cell, out: Path, model_dir: Path) -> list[dict]:
    """One cell in simulation: every joining policy's summary (with its ``run_dir``)."""
    if cell.world != "cluster":
        from harness.scenarios import worlds

        return worlds.get(cell.world).play(cell, out, model_dir)
    from harness.scenarios.session import run_simulated
    from harness.spec.inventory import load_inventory
    from harness.testbed.simulated import simulated_state

    state = simulated_state(load_inventory(shipped.find(cell.inventory) if cell.inventory else None))
    session = session_for(cell, state, out, model_dir, cell_folder(cell))
    return run_simulated(state, session, 1, first_seed=cell.seed, terminating_s=cell.terminating_s,
                         gap_time_limit_s=cell.gap_time_limit_s)


def play_live(cell: Cell, out: Path, model_dir: Path, cluster, state_dir: Path) -> list[dict]:
    """One cell live on the testbed ``cluster`` (``harness run``'s session: every joining policy
    in turn, the load seeded by the cell's seed): every policy's summary (with its ``run_dir``)."""
    if cell.world != "cluster":
        from harness.scenarios import worlds

        return worlds.get(cell.world).play_live(cell, out, model_dir, cluster)
    from harness.scenarios.session import run_session

    session = session_for(cell, cluster.state, out, model_dir, cell_folder(cell, live=True))
    return run_session(cluster, cluster.state, state_dir, session, 1, cell.seed)


def live_mismatch(track: Track, testbed: str) -> str | None:
    """Why a track's cells cannot be played on the testbed ``testbed`` names (another inventory)."""
    from harness.spec.inventory import load_inventory

    from harness.scenarios import worlds

    default = None if track.world == "cluster" else worlds.get(track.world).INVENTORY
    inventory = track.inventory or default
    want = load_inventory(shipped.find(inventory) if inventory else None).name
    return None if want == testbed else f"the testbed is {testbed!r}; the track's inventory is {want!r}"


def run_cells_live(todo: list[Cell], out: Path, model_dir: Path, cluster, state_dir: Path, on_done: Done) -> None:
    """Live cells one after another on the one testbed (policies take turns within each); a cell
    that raises is played once more after the testbed is cleared (``harness undeploy``'s work)."""
    from harness.testbed.pods import undeploy

    for cell in todo:
        error = None
        for _ in range(2):
            try:
                on_done(cell, play_live(cell, out, model_dir, cluster, state_dir), None)
                break
            except KeyboardInterrupt:
                raise
            except Exception as exc:  # a failed cell is reported, never lost
                error = f"{type(exc).__name__}: {exc}"[:500]
                try:  # what 'harness undeploy' does: no pods, every node back up
                    undeploy(cluster)
                    for n in cluster.nodes:
                        if n.role != "client" and not cluster.node_up(n.name):
                            cluster.recover_node(n.name)
                except Exception:
                    pass  # the second try meets the same testbed and says why
        else:
            on_done(cell, None, error)


def _worker_init() -> None:
    import torch

    from harness.interrupts import die_with_parent

    die_with_parent()  # a leaderboard killed with -9 leaves no worker behind
    torch.set_num_threads(1)  # one core per worker: the pool is the parallelism


def _pool_worker_init() -> None:
    """A process pool's worker: as ``_worker_init``, and deaf to Ctrl-C (``interrupts.deaf_worker``):
    a cell's fate is the parent's to decide."""
    import torch

    from harness.interrupts import deaf_worker

    deaf_worker()
    torch.set_num_threads(1)


Done = Callable[["Cell", "list[dict] | None", "str | None"], None]


CELL_BUDGET_S = 3600.0  # a cell's wall clock at most (harness leaderboard --cell-budget)
TIMED_OUT = "timed out"  # how a cell past its budget is reported (its error begins with it)
POLL_S = 0.25  # how often the executors look at a request to stop


def timed_out(budget_s: float) -> str:
    """A cell's error past its budget, whichever executor played it."""
    return f"{TIMED_OUT}: still playing after the cell budget of {budget_s:g} s (harness leaderboard --cell-budget)"


def run_cells(todo: list[Cell], out: Path, model_dir: Path, jobs: int, on_done: Done,
              budget_s: float = CELL_BUDGET_S, stop: threading.Event | None = None) -> None:
    """Play every cell in worker processes, at most ``jobs`` at once; ``on_done(cell, summaries,
    error)`` after each. A cell that raises is played once more; one whose worker died (the pool
    cannot say which of the cells in flight killed it) is played again alone, so an innocent
    neighbour is not blamed; a second failure is reported, never dropped. A cell still playing
    ``budget_s`` after it was handed to a worker is reported timed out, not played again (a
    hang hangs again): its worker is killed, the other cells in flight are played again. Once
    ``stop`` is set (looked at every ``POLL_S``), the cells finished by then are handed to
    ``on_done``, the workers killed and the rest left unplayed."""
    stop = stop or threading.Event()
    suspects = _pass(todo, out, model_dir, jobs, on_done, budget_s=budget_s, stop=stop)
    for cell in suspects:  # alone: a death now is this cell's own
        if stop.is_set():
            return
        if _pass([cell], out, model_dir, 1, on_done, last=True, budget_s=budget_s, stop=stop) and not stop.is_set():
            on_done(cell, None, "its worker process died, twice")


def _pass(todo: list[Cell], out: Path, model_dir: Path, jobs: int, on_done: Done, last: bool = False,
          budget_s: float = CELL_BUDGET_S, stop: threading.Event | None = None) -> list[Cell]:
    """One pass over ``todo``; the cells in flight when a worker died (to be played again)."""
    ctx = multiprocessing.get_context("spawn")  # torch and fork do not mix
    stop = stop or threading.Event()
    queue = [(c, 2 if last else 1) for c in todo]
    suspects: list[Cell] = []
    while queue and not stop.is_set():
        with cf.ProcessPoolExecutor(jobs, mp_context=ctx, initializer=_pool_worker_init) as pool:
            pending: dict = {}
            began: dict = {}
            broken = False
            while (queue or pending) and not broken:
                while queue and len(pending) < jobs:  # no more in flight than workers: a death blames few
                    c, attempt = queue.pop(0)
                    fut = pool.submit(play, c, out, model_dir)
                    pending[fut], began[fut] = (c, attempt), time.monotonic()
                first = min(began[f] for f in pending)
                done, _ = cf.wait(pending, timeout=min(POLL_S, max(0.0, first + budget_s - time.monotonic())),
                                  return_when=cf.FIRST_COMPLETED)
                if stop.is_set():  # what finished is kept, the rest stopped where it is
                    for fut, (c, _) in pending.items():
                        if fut.done() and not fut.cancelled() and fut.exception() is None:
                            on_done(c, fut.result(), None)
                    pending.clear()
                    kill_pool(pool)
                    return []
                now = time.monotonic()
                if not done and any(now - began[f] >= budget_s for f in pending):
                    # past the budget: those cells are timed out, the rest played again
                    for fut, (c, attempt) in list(pending.items()):
                        if now - began[fut] >= budget_s:
                            on_done(c, None, timed_out(budget_s))
                        else:
                            queue.insert(0, (c, attempt))
                    pending.clear()
                    kill_pool(pool)
                    break
                for fut in done:
                    c, attempt = pending.pop(fut)
                    began.pop(fut)
                    try:
                        result = fut.result()
                    except cf.process.BrokenProcessPool:
                        broken = True
                        suspects.append(c)
                        continue
                    except Exception as exc:
                        if attempt == 1:
                            queue.append((c, 2))
                        else:
                            on_done(c, None, f"{type(exc).__name__}: {exc}"[:300])
                        continue
                    on_done(c, result, None)
            for fut, (c, _) in pending.items():  # the others in flight when the pool broke
                suspects.append(c)
            if broken and last:
                return suspects
    return suspects


PLAYED_ON = "played_on"  # a summary's key, in memory only: the Ray node (its IP) that played the cell


def play_packed(cell: Cell, model_dir: Path) -> tuple[list[dict], bytes]:
    """``play`` in a folder of its own, its run directories packed (tar) with run_dir relative to
    it, and each summary's ``played_on`` the Ray node's address: what a cell sends back from
    another machine."""
    import ray

    _worker_init()
    tmp = Path(tempfile.mkdtemp(prefix="harness-cell-"))
    try:
        summaries = play(cell, tmp, model_dir)
        for s in summaries:
            s["run_dir"] = str(Path(s["run_dir"]).resolve().relative_to(tmp.resolve()))
            s[PLAYED_ON] = ray.util.get_node_ip_address()
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tar:
            tar.add(tmp / "runs", arcname="runs")
        return summaries, buf.getvalue()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run_cells_on_ray(todo: list[Cell], out: Path, model_dir: Path, address: str | None, jobs: int,
                     on_done: Done, budget_s: float = CELL_BUDGET_S, stop: threading.Event | None = None) -> None:
    """Play every cell as a Ray task (a local Ray instance of ``jobs`` CPUs when ``address`` is
    None), one CPU each; Ray plays a task again once if it raises or its worker dies; its run
    directories are unpacked into ``out``. The learned policies' models are read from
    ``model_dir`` on the node that plays the cell (a checkout of harness on every node). A cell
    still playing ``budget_s`` after it was handed to Ray is cancelled (its worker killed) and
    reported timed out, as in the pool; ``stop`` as in ``run_cells``."""
    for cell, result, error in ray_tasks(play_packed, {c: (c, model_dir) for c in todo}, address, jobs,
                                         budget_s=budget_s, stop=stop):
        if error is not None:
            on_done(cell, None, error[:300])
            continue
        summaries, packed = result
        with tarfile.open(fileobj=io.BytesIO(packed), mode="r:gz") as tar:
            tar.extractall(out, filter="data")
        for s in summaries:
            s["run_dir"] = str(out / s["run_dir"])
        on_done(cell, summaries, None)


def ray_tasks(fn, todo: dict, address: str | None, jobs: int, budget_s: float | None = None,
              stop: threading.Event | None = None):
    """``fn(*args)`` for every ``key -> args`` of ``todo`` as a Ray task of one CPU, run once more
    by Ray if it raises or its worker dies; yields (key, result, None), or (key, None, why) after
    the second failure, as tasks finish. No more tasks are in flight than the cluster has CPUs,
    so a task handed to Ray starts at once: one still running ``budget_s`` after (both tries
    together) is cancelled, its worker killed, and yields ``timed_out``. Once ``stop`` is set
    (looked at every ``POLL_S``), the tasks finished by then are yielded and the others cancelled."""
    stop = stop or threading.Event()
    with ray_session(address, jobs) as ray:
        remote = ray.remote(num_cpus=1, max_retries=1, retry_exceptions=True)(fn)
        slots = max(1, int(ray.cluster_resources().get("CPU", jobs)))
        queue, refs, began = list(todo.items()), {}, {}
        while queue or refs:
            while queue and len(refs) < slots:
                key, args = queue.pop(0)
                ref = remote.remote(*args)
                refs[ref], began[ref] = key, time.monotonic()
            done, _ = ray.wait(list(refs), num_returns=1, timeout=POLL_S)
            if stop.is_set():  # what finished is kept, the rest cancelled
                done, running = ray.wait(list(refs), num_returns=len(refs), timeout=0)
                for ref in running:
                    ray.cancel(ref, force=True)
                for ref in done:
                    try:
                        yield refs[ref], ray.get(ref), None
                    except Exception:
                        pass  # failed, or cancelled as it finished: not played, as the ones still running
                return
            now = time.monotonic()
            for ref in [r for r in refs if r not in done and budget_s is not None and now - began[r] >= budget_s]:
                ray.cancel(ref, force=True)  # not tried again: a hang hangs again
                key = refs.pop(ref)
                began.pop(ref)
                yield key, None, timed_out(budget_s)
            if not done:
                continue
            key = refs.pop(done[0])
            began.pop(done[0])
            try:
                result = ray.get(done[0])
            except Exception as exc:
                yield key, None, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                continue
            yield key, result, None


@contextmanager
def ray_session(address: str | None, jobs: int):
    """The ``ray`` module, connected: to a local instance of ``jobs`` CPUs when ``address`` is
    None, else to that cluster; shut down after."""
    try:
        import ray
    except ImportError:
        from harness.errors import UserError

        raise UserError("Ray is not installed; pip install 'harness-bench[leaderboard]' (or run without --ray)",
                        field="--ray") from None
    if address is None:
        os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # a private local instance: no token in the home folder
        ray.init(num_cpus=jobs, include_dashboard=False, log_to_driver=False, configure_logging=False)
    else:
        ray.init(address=address, log_to_driver=False, configure_logging=False)
    try:
        yield ray
    finally:
        ray.shutdown()
