"""Paper 003's greedy best-fit and multi-agent rollout on a :mod:`harness.families.rollout.world` instance,
compiled with numba (the rollout runs the greedy thousands of times per decision).

**Greedy best-fit** (the paper's Fig. 1, after its ref. [22]): apps one by one, in order. The
first microservice's candidate nodes are the feasible ones ranked by the objective's increase
(w·(o_v + n_v·s) + (1 − w)·(rise of θ_a)); each next microservice goes to the feasible node of
least increase among those within λ of the nodes of the microservices it is connected to. If one
cannot be placed, the app starts again with its first microservice on the next-ranked node, and
so on; if none works the app is rejected. Ties go to the lower node index.

**Rollout** (eq. 8): the same agents in the same order (one per microservice). An agent ranks its
feasible nodes by immediate cost g, keeps the first β of them (a share of the ranked list, or a
count), and for each runs the greedy as base policy to complete the rest (the rest of this app,
then ``horizon`` more apps, or all of them: -1), choosing argmin g + γ·J̃. γ = 0 never looks
ahead, so it takes the first-ranked node — the greedy's choice — and restarts as the greedy
does: the two give the same assignment. A completion that gets stuck in the current app costs
infinity; a later app it rejects costs ``reject_cost``.

**A base that holds back pending sources** (``reserve_ms`` > 0; harness's addition, off by
default): the base policy ranks a node that is the source of an app still to come (not the
current app's own) ``reserve_ms`` of delay dearer, so its completion leaves the room where that
app would pay no delay. The agents still rank by their immediate cost, and J̃ is still the
objective's cost of the completion. Why: an agent that moves one microservice off another app's
source gains nothing when the paper's greedy then puts the app's other microservices there all
the same; only the pair moved together frees the room (studies/rollout/README.md, "The base policy").
"""

from __future__ import annotations

import math

import numba
import numpy as np

from harness.families.rollout.world import Flat, Instance

INF = np.inf


@numba.njit(cache=True)
def _increase(k, v, theta, src, w, data, op, net, delay):
    rise = delay[src, v] - theta
    if rise < 0.0:
        rise = 0.0
    return w * (op[v] + net[v] * data[k]) + (1.0 - w) * rise


@numba.njit(cache=True)
def _feasible(k, v, assign, free_cpu, free_ram, cpu, ram, arc_start, arc_other, arc_lambda, delay):
    if free_cpu[v] < cpu[k] - 1e-9 or free_ram[v] < ram[k] - 1e-9:
        return False
    for e in range(arc_start[k], arc_start[k + 1]):
        u = assign[arc_other[e]]
        if u < 0 or delay[u, v] > arc_lambda[e] + 1e-9:
            return False
    return True


@numba.njit(cache=True)
def _held_back(a, v, src, reserve, pending):
    """What ranking node v costs app a beyond its objective: ``reserve`` when v is the source of
    an app after a and not a's own (0 for the paper's greedy, reserve = 0)."""
    if reserve > 0.0 and v != src and pending[v] > a:
        return reserve
    return 0.0


@numba.njit(cache=True)
def _ranked(a, k, theta, src, reserve, pending, assign, free_cpu, free_ram, w, cpu, ram, data, arc_start, arc_other,
            arc_lambda, op, net, delay):
    """Feasible nodes for microservice k (of app a), by immediate cost plus what holding back
    pending apps' sources adds (stable), and their immediate costs."""
    V = len(op)
    nodes = np.empty(V, np.int64)
    costs = np.empty(V)
    ranks = np.empty(V)
    m = 0
    for v in range(V):
        if _feasible(k, v, assign, free_cpu, free_ram, cpu, ram, arc_start, arc_other, arc_lambda, delay):
            nodes[m] = v
            costs[m] = _increase(k, v, theta, src, w, data, op, net, delay)
            ranks[m] = costs[m] + _held_back(a, v, src, reserve, pending)
            m += 1
    order = np.argsort(ranks[:m], kind="mergesort")
    return nodes[:m][order], costs[:m][order]


@numba.njit(cache=True)
def _best(a, k, theta, src, reserve, pending, assign, free_cpu, free_ram, w, cpu, ram, data, arc_start, arc_other,
          arc_lambda, op, net, delay):
    """The greedy's node for microservice k of app a (-1 if none is feasible) and its immediate cost."""
    best, best_cost, best_rank = -1, INF, INF
    for v in range(len(op)):
        if _feasible(k, v, assign, free_cpu, free_ram, cpu, ram, arc_start, arc_other, arc_lambda, delay):
            c = _increase(k, v, theta, src, w, data, op, net, delay)
            r = c + _held_back(a, v, src, reserve, pending)
            if r < best_rank:
                best, best_cost, best_rank = v, c, r
    return best, best_cost


@numba.njit(cache=True)
def _put(k, v, assign, free_cpu, free_ram, cpu, ram):
    assign[k] = v
    free_cpu[v] -= cpu[k]
    free_ram[v] -= ram[k]


@numba.njit(cache=True)
def _undo_app(a, app_start, assign, free_cpu, free_ram, cpu, ram):
    for k in range(app_start[a], app_start[a + 1]):
        v = assign[k]
        if v >= 0:
            free_cpu[v] += cpu[k]
            free_ram[v] += ram[k]
            assign[k] = -1


@numba.njit(cache=True)
def _finish_app(a, k0, theta, reserve, pending, assign, free_cpu, free_ram, w, app_start, source, cpu, ram, data,
                arc_start, arc_other, arc_lambda, op, net, delay):
    """Greedy for microservices k0.. of app a (earlier ones placed, the app's θ so far given).
    Returns the cost added, or INF if one cannot be placed (what was placed stays: the caller undoes)."""
    total = 0.0
    src = source[a]
    for k in range(k0, app_start[a + 1]):
        v, c = _best(a, k, theta, src, reserve, pending, assign, free_cpu, free_ram, w, cpu, ram, data, arc_start,
                     arc_other, arc_lambda, op, net, delay)
        if v < 0:
            return INF
        _put(k, v, assign, free_cpu, free_ram, cpu, ram)
        total += c
        if delay[src, v] > theta:
            theta = delay[src, v]
    return total


@numba.njit(cache=True)
def _greedy_app(a, reserve, pending, assign, free_cpu, free_ram, w, app_start, source, cpu, ram, data, arc_start,
                arc_other, arc_lambda, op, net, delay):
    """The greedy for a whole app, with its restarts. Returns the cost added, or INF (rejected, nothing placed)."""
    k0 = app_start[a]
    src = source[a]
    nodes, costs = _ranked(a, k0, 0.0, src, reserve, pending, assign, free_cpu, free_ram, w, cpu, ram, data,
                           arc_start, arc_other, arc_lambda, op, net, delay)
    for r in range(len(nodes)):
        _put(k0, nodes[r], assign, free_cpu, free_ram, cpu, ram)
        rest = _finish_app(a, k0 + 1, delay[src, nodes[r]], reserve, pending, assign, free_cpu, free_ram, w, app_start,
                           source, cpu, ram, data, arc_start, arc_other, arc_lambda, op, net, delay)
        if rest < INF:
            return costs[r] + rest
        _undo_app(a, app_start, assign, free_cpu, free_ram, cpu, ram)
    return INF


@numba.njit(cache=True)
def greedy(w, app_start, source, cpu, ram, data, arc_start, arc_other, arc_lambda, op, net, delay, node_cpu, node_ram):
    assign = np.full(len(cpu), -1, np.int64)
    free_cpu, free_ram = node_cpu.copy(), node_ram.copy()
    none_pending = np.full(len(op), -1, np.int64)
    for a in range(len(source)):
        _greedy_app(a, 0.0, none_pending, assign, free_cpu, free_ram, w, app_start, source, cpu, ram, data, arc_start,
                    arc_other, arc_lambda, op, net, delay)
    return assign


@numba.njit(cache=True)
def _lookahead(a, k, theta, last_app, reject_cost, reserve, pending, assign, free_cpu, free_ram, w, app_start, source,
               cpu, ram, data, arc_start, arc_other, arc_lambda, op, net, delay):
    """J̃: the base policy's cost of completing app a from microservice k, then apps a+1..last_app,
    on copies (the objective's cost: what the base holds back for pending sources only steers it)."""
    assign = assign.copy()
    free_cpu, free_ram = free_cpu.copy(), free_ram.copy()
    total = _finish_app(a, k, theta, reserve, pending, assign, free_cpu, free_ram, w, app_start, source, cpu, ram,
                        data, arc_start, arc_other, arc_lambda, op, net, delay)
    if total == INF:
        return INF
    for b in range(a + 1, last_app + 1):
        c = _greedy_app(b, reserve, pending, assign, free_cpu, free_ram, w, app_start, source, cpu, ram, data,
                        arc_start, arc_other, arc_lambda, op, net, delay)
        total += reject_cost if c == INF else c
    return total


@numba.njit(cache=True)
def _choose(a, k, theta, forced, beta_share, beta_count, gamma, horizon, reject_cost, reserve, pending, assign,
            free_cpu, free_ram, w, app_start, source, cpu, ram, data, arc_start, arc_other, arc_lambda, op, net, delay):
    """The rollout's node for microservice k (``forced`` ≥ 0: that rank of the ranked list), or -1.
    The agent ranks by its immediate cost alone; ``reserve`` steers only the base policy."""
    nodes, costs = _ranked(a, k, theta, source[a], 0.0, pending, assign, free_cpu, free_ram, w, cpu, ram, data,
                           arc_start, arc_other, arc_lambda, op, net, delay)
    m = len(nodes)
    if forced >= 0:
        return nodes[forced] if forced < m else -1
    if m == 0:
        return -1
    if gamma == 0.0:
        return nodes[0]
    keep = beta_count if beta_count > 0 else int(math.ceil(beta_share * m - 1e-9))
    keep = max(1, min(m, keep))
    A = len(source)
    last = A - 1 if horizon < 0 else min(A - 1, a + horizon)
    best, best_score = nodes[0], INF
    for r in range(keep):
        v = nodes[r]
        _put(k, v, assign, free_cpu, free_ram, cpu, ram)
        th = max(theta, delay[source[a], v])
        j = _lookahead(a, k + 1, th, last, reject_cost, reserve, pending, assign, free_cpu, free_ram, w, app_start,
                       source, cpu, ram, data, arc_start, arc_other, arc_lambda, op, net, delay)
        assign[k] = -1
        free_cpu[v] += cpu[k]
        free_ram[v] += ram[k]
        score = costs[r] + gamma * j
        if score < best_score:
            best, best_score = v, score
    return best


@numba.njit(cache=True)
def rollout(beta_share, beta_count, gamma, horizon, reject_cost, reserve, w, app_start, source, cpu, ram, data,
            arc_start, arc_other, arc_lambda, op, net, delay, node_cpu, node_ram):
    assign = np.full(len(cpu), -1, np.int64)
    free_cpu, free_ram = node_cpu.copy(), node_ram.copy()
    pending = np.full(len(op), -1, np.int64)  # per node, the last app whose source it is
    reserve = (1.0 - w) * reserve  # ms of delay, weighted as the objective weighs delay
    for b in range(len(source)):
        pending[source[b]] = b
    for a in range(len(source)):
        k0, src = app_start[a], source[a]
        for restart in range(len(op)):  # restart r ≥ 1 puts the first microservice on the r-th ranked node
            forced = restart if restart > 0 else -1
            theta = 0.0
            failed_at = -1
            for k in range(k0, app_start[a + 1]):
                v = _choose(a, k, theta, forced if k == k0 else -1, beta_share, beta_count, gamma, horizon, reject_cost,
                            reserve, pending, assign, free_cpu, free_ram, w, app_start, source, cpu, ram,
                            data, arc_start, arc_other, arc_lambda, op, net, delay)
                if v < 0:
                    failed_at = k
                    break
                _put(k, v, assign, free_cpu, free_ram, cpu, ram)
                theta = max(theta, delay[src, v])
            if failed_at < 0:
                break
            _undo_app(a, app_start, assign, free_cpu, free_ram, cpu, ram)
            if failed_at == k0:  # no node at this rank for the first microservice: none at a later rank either
                break
    return assign


def _args(inst: Instance, f: Flat) -> tuple:
    i = inst.infra
    return (float(inst.w), f.app_start, f.source, f.cpu, f.ram, f.data, f.arc_start, f.arc_other, f.arc_lambda,
            i.op_cost.astype(float), i.net_cost.astype(float), i.delay.astype(float), i.cpu.astype(float),
            i.ram.astype(float))


def solve_greedy(inst: Instance) -> list[np.ndarray]:
    f = inst.flat
    return f.split(greedy(*_args(inst, f)))


def solve_rollout(inst: Instance, beta: float = 0.9, beta_count: int = 0, gamma: float = 0.8, horizon: int = -1,
                  reject_cost: float = 1e4, reserve_ms: float = 0.0) -> list[np.ndarray]:
    f = inst.flat
    return f.split(rollout(float(beta), int(beta_count), float(gamma), int(horizon), float(reject_cost),
                           float(reserve_ms), *_args(inst, f)))
