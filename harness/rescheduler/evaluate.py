"""REACH's Fig. 8 sweep (``harness sweep``): policies compared in simulation (REACH Fig. 8 and
§VII-F, on the model): for each pod count, the same scenarios (random background utilisation,
seeded) are given to every policy. Placement heuristics place all pods; reschedulers start from
their placer's placement (the default scheduler's) and move pods through the one move loop until
they are idle or at the step cap; ``optimal`` searches exhaustively and its plan is followed."""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, ContextManager

import numpy as np

from harness.policies import placer_for
from harness.policies.contract import Ability, ClusterView, Move, PendingPod, PodView, Policy
from harness.rescheduler.loop import CycleGuard, run_round
from harness.sim.ceenv import Batch, Dynamics


@dataclass
class Result:
    policy: str
    pods: int
    latency_ms: float  # mean over scenarios
    moves: float  # mean moves per scenario
    moved_share: float  # mean share of pods moved at least once
    scenarios: int
    # the final placements' metrics (harness.results.placement_metrics), means over scenarios
    cost_per_hour: float | None = None
    edge_ratio: float | None = None
    edge_ratio_std: float | None = None
    gini_nodes: float | None = None
    edge_fragmentation: float | None = None
    rejection_rate: float = 0.0  # pods the placer left pending, share of the pods asked for
    migrations: dict = field(default_factory=dict)  # moves per scenario by the roles of their nodes
    # optimality gap (harness.rescheduler.gaps): to the optimum, or to the best known and the bound
    gap: float | None = None
    gap_to_bound: float | None = None
    gap_reference: str | None = None


def scenario(dyn: Dynamics, pods: int, seed: int, load: float = 0.0) -> Batch:
    """Background load only; no pods placed yet. ``load``: requests/s or closed-loop users (as
    ``dyn``'s EnvConfig counts them) under which the latency is taken; 0: none, REACH's model."""
    if pods % dyn.S:
        raise ValueError(f"{pods} pods do not split evenly over {dyn.S} services")
    st = dyn.new_batch(1)
    rng = np.random.default_rng(seed)
    lo, hi = dyn.cfg.utilisation
    st.bg_cpu[0] = rng.uniform(lo, hi, dyn.N) * dyn.C_cpu
    st.bg_mem[0] = rng.uniform(lo, hi, dyn.N) * dyn.C_mem
    st.load[0] = load
    return st


def slots_for(dyn: Dynamics, pods: int) -> np.ndarray:
    r = pods // dyn.S
    return np.concatenate([s * dyn.cfg.max_replicas + np.arange(r) for s in range(dyn.S)])


class SimWorld:
    """Environment 0 of a simulator state as the move loop's world: a pod is a slot
    (``<service>#<slot>``); a move writes the slot's node."""

    def __init__(self, dyn: Dynamics, st: Batch):
        self.dyn, self.st = dyn, st

    def pod_name(self, slot: int) -> str:
        return f"{self.dyn.model.services[self.dyn.slot_service[slot]]}#{slot}"

    def view(self) -> ClusterView:
        dyn, st = self.dyn, self.st
        pods = [PodView(self.pod_name(p), dyn.model.services[dyn.slot_service[p]], dyn.model.topo.nodes[st.node[0, p]],
                        float(dyn.r_cpu[p]), float(dyn.r_mem[p])) for p in np.flatnonzero(st.node[0] >= 0)]
        load, closed = float(st.load[0]) or None, dyn.cfg.load_kind == "closed"
        return ClusterView.build(dyn.model.app, dyn.model, st.up[0], pods, st.bg_cpu[0], st.bg_mem[0],
                                 rate=None if closed else load, users=int(load) if closed and load else None)

    def place(self, placer: Policy, slots) -> int:
        """Place the pods of ``slots``; returns how many the placer left pending."""
        view = self.view()
        pending = [PendingPod(self.dyn.model.services[self.dyn.slot_service[s]], float(self.dyn.r_cpu[s]),
                              float(self.dyn.r_mem[s]), self.pod_name(s)) for s in slots]
        from harness.errors import PolicyError
        from harness.policies.contract import BadOutput, checked_place

        try:
            nodes = checked_place(placer.place(view, pending), view, len(pending))
        except BadOutput as exc:
            raise PolicyError(f"policy {placer.name!r}: {exc}") from None
        rejected = 0
        for slot, node in zip(slots, nodes):
            if node is None:
                rejected += 1
                continue
            self.st.node[0, slot] = view.index(node)
        with np.errstate(invalid="ignore", divide="ignore"):  # a service left without pods: no latency
            self.st.latency = self.dyn.latency(self.st)
        return rejected

    def apply(self, move: Move, view: ClusterView) -> dict:
        slot = int(move.pod.rsplit("#", 1)[1])
        self.st.node[0, slot] = view.index(move.node)
        # the observation carries the current latency: keep it true, as CEEnv and the live loop do
        self.st.latency = self.dyn.latency(self.st)
        return {}

    def turn(self):
        return contextlib.nullcontext()


def run_policy(dyn: Dynamics, policy: Policy, name: str, pods: int, seeds: list[int],
               max_moves: int | None = None, finals: list | None = None, load: float = 0.0) -> Result | None:
    """None when the policy cannot handle this size (an exhaustive search beyond its limit).
    ``finals``: a list to which each scenario's final placement (service -> nodes) is appended.
    ``load``: the scenarios' load (see ``scenario``), which the policies see and the latency counts."""
    from harness.results import placement_metrics as pm

    max_moves = max_moves or dyn.cfg.max_steps
    topo = dyn.model.topo
    nodes = {n: pm.NodeInfo(topo.roles[i], float(topo.cpus[i]), float(topo.memory_mib[i]), float(topo.costs[i]),
                            topo.sites[i]) for i, n in enumerate(topo.nodes)}
    requests = pm.requests_of(dyn.model.app)
    lat, moves, shares, snaps, rejected, move_events = [], [], [], [], [], []
    for seed in seeds:
        world = SimWorld(dyn, scenario(dyn, pods, seed, load))
        slots = slots_for(dyn, pods)
        rejected.append(world.place(placer_for(policy), slots) / len(slots))
        start = world.st.node[0].copy()
        n = 0
        if policy.can(Ability.PLAN):
            r = run_round(policy, world, max_moves, CycleGuard(),
                          lambda kind, **d: move_events.append({"kind": kind, "detail": d}))
            if r.ended == "skipped":
                return None
            n = r.moves
        moves.append(n)
        final = world.view().placement()
        snaps.append(pm.snapshot(final, nodes, requests))
        if finals is not None:
            finals.append(final)
        shares.append(float((world.st.node[0][slots] != start[slots]).mean()))
        lat.append(float(world.st.latency[0]))  # kept current after every move

    def mean(key: str) -> float | None:
        vals = [sn[key] for sn in snaps if sn[key] is not None]
        return round(float(np.mean(vals)), 4) if vals else None
    per_kind = {k: round(v / len(seeds), 3) for k, v in pm.migrations(move_events, nodes).items()}
    return Result(name, pods, float(np.mean(lat)), float(np.mean(moves)), float(np.mean(shares)), len(seeds),
                  mean("cost_per_hour"), mean("edge_ratio"), mean("edge_ratio_std"), mean("gini_nodes"),
                  mean("edge_fragmentation"), round(float(np.mean(rejected)), 4), per_kind)


def write_results(rows: list[dict], out: Path) -> None:
    """``out`` as CSV (a dict cell as JSON) and the same rows as JSON beside it."""
    from harness.results.csvfile import write_rows

    write_rows(out, [{k: json.dumps(v, sort_keys=True) if isinstance(v, dict) else v for k, v in r.items()}
                     for r in rows])
    out.with_suffix(".json").write_text(json.dumps(rows, indent=1))


def pod_counts(text: str) -> list[int]:
    """``--pods``: comma-separated whole numbers of pods."""
    from harness.errors import UserError

    try:
        sizes = [int(x) for x in text.split(",")]
    except ValueError:
        raise UserError(f"expected comma-separated whole numbers, got {text!r}", field="--pods") from None
    if any(n < 1 for n in sizes):
        raise UserError(f"expected pod counts of at least 1, got {text!r}", field="--pods")
    return sizes


def sweep(app_file: Path, profile_file: Path, testbed_file: Path | None, sizes: list[int], policies: list[str],
          seeds: list[int], model_dir: Path, gap_time_limit: float = 10.0,
          on_result: Callable[[str, int, Result | None], None] = lambda name, pods, result: None,
          gap_progress: Callable[[int, int], ContextManager[Callable[[], None]]] | None = None) -> list[Result]:
    """REACH's Fig. 8 sweep (``harness sweep``): for each pod count of ``sizes`` (split evenly over
    the services), every policy of ``policies`` (references, as ``--policy`` names them) on the same
    seeded scenarios (``seeds``: ``harness.seeds.seed_list``), then each policy's optimality gap
    where ``gap_time_limit`` > 0 (seconds HiGHS may take per scenario: ``harness.rescheduler.gaps``).
    ``on_result(policy, pods, result)``: each result as it is known (None: the policy cannot take
    this size); ``gap_progress(pods, scenarios)``: a context giving the function called after each
    scenario's gap. One Result per policy and size that ran, in that order."""
    from harness.errors import UserError
    from harness.policies import build_for_app, label
    from harness.rescheduler.gaps import gaps
    from harness.sim.ceenv import EnvConfig, load_dynamics

    app, _, dyn = load_dynamics(app_file, profile_file, testbed_file)
    if any(n % dyn.S or n < dyn.S for n in sizes):
        raise UserError(f"pod counts must be multiples of the {dyn.S} services (one count of replicas for each)",
                        field="--pods")
    per_service = max(sizes) // dyn.S
    if per_service > dyn.cfg.max_replicas:  # more replicas than CEEnv's default slots: the slots follow
        app, _, dyn = load_dynamics(app_file, profile_file, testbed_file, EnvConfig(max_replicas=per_service))
    built: dict[str, Policy] = {}
    for ref in policies:
        policy = build_for_app(ref, app.name, app_file, profile_file, model_dir)
        built[label(ref, policy)] = policy
    progress = gap_progress or (lambda pods, total: contextlib.nullcontext(lambda: None))
    rows: list[Result] = []
    for size in sizes:
        done: dict[str, Result] = {}
        finals: dict[str, list] = {}
        for name, policy in built.items():
            finals[name] = []
            result = run_policy(dyn, policy, name, size, seeds, finals=finals[name])
            if result is None:
                del finals[name]
                on_result(name, size, None)
                continue
            done[name] = result
        if gap_time_limit > 0 and finals:
            with progress(size, len(seeds)) as advance:
                found = gaps(dyn, size, seeds, finals, gap_time_limit, advance)
            for name, g in found.items():
                done[name].gap, done[name].gap_to_bound, done[name].gap_reference = g.gap, g.gap_to_bound, g.reference
        for name, result in done.items():
            rows.append(result)
            on_result(name, size, result)
    return rows
