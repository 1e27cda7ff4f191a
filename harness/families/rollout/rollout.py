"""Paper 003's greedy best-fit and multi-agent rollout (eq. 8), on two problems.

- **Paper 003's own problem** (:mod:`harness.families.rollout.world`: many apps, cost and delay, delay caps):
  ``solve_instance`` runs the compiled greedy and rollout of :mod:`harness.families.rollout.search`.
- **harness's problem**, REACH's latency model over a :class:`ClusterView` — the rollout is
  model-agnostic. The agents are the pods to place, one after another. An agent's stage cost is
  the rise of the model's latency over the pods placed so far (``LatencyModel.partial_latency``:
  a service without pods yet counts as absent), so the stage costs of a complete placement add up
  to its predicted latency. It ranks its feasible nodes by that rise g, keeps the first β, lets
  the base policy (``latency-greedy``, ``default`` or ``greedy-bestfit``) place every pod after it
  and takes argmin g + γ·J̃, J̃ the rise the base policy's completion adds. γ = 0 is the greedy
  best-fit on the model: each pod where the latency rises least.

As a rescheduler (``plan``), the rollout places every pod again from scratch (their own load
removed, the background kept) and plans the moves to that placement when it is predicted at
least ``min_gain_ms`` faster than the current one; the move loop follows the plan.

Each agent's look-ahead costs a base-policy completion of every later pod for each of its β
candidates: O(pods² · nodes) per placement. ``budget_s`` bounds it in wall-clock time (anytime:
past it the base policy places the pods left), so a thousand-node continuum gets an answer.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from harness.families.rollout import cost_delay
from harness.policies import register
from harness.policies.contract import Ability, ClusterView, Move, NoArgs, PendingPod, Policy
from harness.policies.heuristics import nearest_least_allocated
from harness.sim import kube_scheduler
from harness.families.rollout.world import Instance, Outcome

BASES = ("latency-greedy", "default", "greedy-bestfit")
BATCH_FLOATS = 1 << 23  # the most numbers a batch of candidate placements holds (64 MB)


@dataclass
class RolloutArgs:
    # β: how many ranked candidates get the look-ahead. The paper quotes "β = 90 %" (Table 4) and
    # "β = 0.8" (Figs. 6-7), so in its runs β is a share of the ranked feasible nodes (rounded up);
    # its text ("up to a maximum of β actions") reads as a count: beta_count > 0 takes that reading.
    beta: float = 0.9
    beta_count: int = 0
    gamma: float = 0.8  # weight of the base policy's cost-to-go; 0 = the greedy
    horizon: int = -1  # paper problem: how many apps after the current one the base policy completes (-1: all)
    reject_cost: float = 1e4  # paper problem: what an app the base policy cannot place costs the look-ahead
    # paper problem: the base policy (the greedy best-fit) ranks a node that is a pending app's source
    # (not the current app's own) this many ms of delay dearer, so its completion leaves room where a
    # later app pays no delay. 0 is the paper's greedy as base; harness's addition, not the paper's
    # (studies/rollout/README.md, "The base policy": one agent's look-ahead over the paper's greedy
    # cannot see two microservices' joint move).
    reserve_ms: float = 0.0
    base: str = "latency-greedy"  # harness's problem: the base policy (latency-greedy | default | greedy-bestfit)
    min_gain_ms: float = 1.0  # as a rescheduler: re-place only when predicted this much faster
    # harness's problem: wall-clock seconds one placement (or re-placement) may think; past them the
    # pods left are placed by the base policy alone (anytime: what the look-ahead chose so far
    # stays). 0: no limit. Keep it under the scenario's plan_budget_s.
    budget_s: float = 0.0

    def validate(self):
        if not 0 < self.beta <= 1:
            raise ValueError(f"beta is a share of the candidates, in (0, 1], not {self.beta}")
        if self.beta_count < 0 or self.gamma < 0 or self.min_gain_ms < 0 or self.reserve_ms < 0 or self.budget_s < 0:
            raise ValueError("beta_count, gamma, reserve_ms, min_gain_ms and budget_s must be ≥ 0")
        if self.horizon < -1:
            raise ValueError("horizon is a number of apps, or -1 for all")
        if self.base not in BASES:
            raise ValueError(f"base must be one of {', '.join(BASES)}, not {self.base!r}")


class _Board:
    """The cluster as arrays while pods are placed one by one (REACH's problem)."""

    def __init__(self, view: ClusterView, counts: np.ndarray, used_cpu: np.ndarray, used_mem: np.ndarray):
        self.view, self.model = view, view.model
        self.X = counts.astype(float).copy()
        self.used_cpu, self.used_mem = used_cpu.astype(float).copy(), used_mem.astype(float).copy()
        self.allowed = view.placeable()
        self.spread = np.array([view.app.spreads(s) for s in self.model.services])

    def copy(self) -> "_Board":
        b = object.__new__(_Board)
        b.view, b.model, b.allowed, b.spread = self.view, self.model, self.allowed, self.spread
        b.X, b.used_cpu, b.used_mem = self.X.copy(), self.used_cpu.copy(), self.used_mem.copy()
        return b

    def feasible(self, s: int, cpu: float, mem: float) -> np.ndarray:
        v = self.view
        ok = self.allowed[s] & kube_scheduler.fits(v.up, v.cap_cpu, v.cap_memory_mib, self.used_cpu, self.used_mem,
                                                   cpu, mem)
        if self.spread[s]:
            ok &= self.X[s] == 0
        return ok

    def put(self, s: int, n: int, cpu: float, mem: float) -> None:
        self.X[s, n] += 1
        self.used_cpu[n] += cpu
        self.used_mem[n] += mem

    def rises(self, s: int, nodes: np.ndarray) -> np.ndarray:
        """The partial latency's rise if a pod of s went to each of ``nodes`` (in batches of at
        most BATCH_FLOATS numbers: a thousand candidates on a large cluster are gigabytes at once)."""
        now = self.model.partial_latency(self.X)[0]
        step = max(1, BATCH_FLOATS // self.X.size)
        out = []
        for k in range(0, len(nodes), step):
            part = nodes[k:k + step]
            batch = np.repeat(self.X[None], len(part), axis=0)
            batch[np.arange(len(part)), s, part] += 1
            out.append(self.model.partial_latency(batch) - now)
        return np.concatenate(out) if out else np.empty(0)

    def base_choice(self, base: str, s: int, cpu: float, mem: float) -> int | None:
        ok = self.feasible(s, cpu, mem)
        if not ok.any():
            return None
        v = self.view
        if base == "default":
            return kube_scheduler.default_choice(v.up, v.cap_cpu, v.cap_memory_mib, self.used_cpu, self.used_mem, cpu,
                                                 mem, self.X[s], 1.0, ok)
        if base == "latency-greedy":
            return nearest_least_allocated(v.user_rtt, v.cap_cpu, self.used_cpu, ok)
        nodes = np.flatnonzero(ok)
        return int(nodes[np.argmin(self.rises(s, nodes))])


def _pods(view: ClusterView, pods: Sequence[PendingPod]) -> list[tuple[int, float, float]]:
    return [(view.model.index[p.service], p.cpu, p.memory_mib) for p in pods]


def rollout_on_model(board: _Board, pods: list[tuple[int, float, float]], args: RolloutArgs) -> list[int | None]:
    """Each pod's node index (None: nothing fits), agent by agent; the board ends fully placed.
    With ``args.budget_s``, the agents after the budget is spent take the base policy's node."""
    out: list[int | None] = []
    deadline = time.monotonic() + args.budget_s if args.budget_s > 0 else math.inf
    for k, (s, cpu, mem) in enumerate(pods):
        if time.monotonic() > deadline:
            n = board.base_choice(args.base, s, cpu, mem)
            if n is not None:
                board.put(s, n, cpu, mem)
            out.append(n)
            continue
        nodes = np.flatnonzero(board.feasible(s, cpu, mem))
        if not len(nodes):
            out.append(None)
            continue
        g = board.rises(s, nodes)
        order = np.argsort(g, kind="stable")
        nodes, g = nodes[order], g[order]
        choice = int(nodes[0])
        if args.gamma > 0 and len(nodes) > 1:
            keep = args.beta_count or math.ceil(args.beta * len(nodes) - 1e-9)
            keep = max(1, min(len(nodes), keep))
            togo = np.empty(keep)  # each candidate's completion judged at once: no placement kept
            for c, n in enumerate(nodes[:keep]):
                b = board.copy()
                b.put(s, int(n), cpu, mem)
                after = board.model.partial_latency(b.X)[0]
                for s2, c2, m2 in pods[k + 1:]:  # the base policy completes the rest
                    n2 = b.base_choice(args.base, s2, c2, m2)
                    if n2 is not None:
                        b.put(s2, n2, c2, m2)
                    if time.monotonic() > deadline:
                        break
                togo[c] = board.model.partial_latency(b.X)[0] - after
                if time.monotonic() > deadline:
                    break
            if time.monotonic() <= deadline:  # else the look-ahead was cut short: the greedy's node
                choice = int(nodes[:keep][np.argmin(g[:keep] + args.gamma * togo)])
        board.put(s, choice, cpu, mem)
        out.append(choice)
    return out


class _ModelRollout(Policy):
    """What greedy-bestfit and rollout share on harness's problem."""

    def _gamma_args(self) -> RolloutArgs:
        return self.args

    def assign(self, inst: Instance) -> list[np.ndarray]:
        """Paper 003's problem: each app's microservices' nodes (-1: the app rejected)."""
        raise NotImplementedError

    def solve_instance(self, inst: Instance) -> Outcome:
        t0 = time.monotonic()
        assign = self.assign(inst)
        return Outcome(self.name, assign, time.monotonic() - t0, inst.evaluate(assign))

    def place(self, view: ClusterView, pods: Sequence[PendingPod]) -> list[str | None]:
        paper = cost_delay.place(view, pods, self.assign)  # paper 003's own problem, when the view holds it
        if paper is not None:
            return paper
        board = _Board(view, view.counts(), view.used_cpu, view.used_memory_mib)
        chosen = rollout_on_model(board, _pods(view, pods), self._gamma_args())
        return [None if n is None else view.nodes[n].name for n in chosen]


@register
class GreedyBestfit(_ModelRollout):
    name = "greedy-bestfit"
    description = "paper 003's greedy best-fit: each pod (microservice) where the objective rises least"
    Args = NoArgs
    abilities = frozenset({Ability.PLACE})

    def _gamma_args(self) -> RolloutArgs:
        return RolloutArgs(gamma=0.0)

    def assign(self, inst: Instance) -> list[np.ndarray]:
        from harness.families.rollout.search import solve_greedy
        return solve_greedy(inst)


@register
class Rollout(_ModelRollout):
    name = "rollout"
    description = "paper 003's multi-agent rollout: each agent's best β nodes, judged by a base policy's completion"
    Args = RolloutArgs
    abilities = frozenset({Ability.PLACE, Ability.PLAN})

    def __init__(self, args: RolloutArgs):
        super().__init__(args)
        self._reached: bytes | None = None  # the placement the last plan leads to

    def target(self, view: ClusterView) -> tuple[dict[str, list[str]], float | None]:
        """Every pod placed again from scratch: the placement and its predicted latency."""
        board = _Board(view, np.zeros_like(view.counts()), view.background_cpu, view.background_memory_mib)
        pods = [PendingPod(p.service, p.cpu, p.memory_mib, p.name) for p in view.pods]
        chosen = rollout_on_model(board, _pods(view, pods), self.args)
        if any(n is None for n in chosen):
            return view.placement(), None
        target: dict[str, list[str]] = {}
        for p, n in zip(view.pods, chosen):
            target.setdefault(p.service, []).append(view.nodes[n].name)
        return target, float(view.model.latency(board.X)[0])

    def plan(self, view: ClusterView) -> list[Move]:
        if view.key() == self._reached or view.latency_ms() is None:
            return []
        target, predicted = self.target(view)
        if predicted is None or predicted > view.latency_ms() - self.args.min_gain_ms:
            return []
        moves = view.moves_to(target)
        self._reached = view.after_all(moves).key()
        return moves

    def assign(self, inst: Instance) -> list[np.ndarray]:
        from harness.families.rollout.search import solve_rollout
        a = self.args
        return solve_rollout(inst, a.beta, a.beta_count, a.gamma, a.horizon, a.reject_cost, a.reserve_ms)
