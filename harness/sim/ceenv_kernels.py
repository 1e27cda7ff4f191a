"""CEEnv's rules compiled: the valid moves (eq. 1), the observation, the transition and the
episode starts, over a batch of environments without Python per environment.

``ceenv.Dynamics`` packs its arrays into three tuples the kernels take:

- ``world``: (slot_service, r_cpu, r_mem, C_cpu, C_mem, affinity, spread) — the slots and nodes;
- ``model``: (E, RT, RS, RG, user_rtt, *latency_kernel.Graph, visits) — REACH's latency model, and each
  service's visits per request for the queueing model under load;
- ``cfg``: a float64 vector of EnvConfig's numbers, indexed by the constants below.

Randomness comes in as uniform draws made by the caller's numpy Generator (a fixed number per
episode start and per step), so a seed gives the same episodes and no global RNG is shared
between environments. A draw ``u`` picks among k options as ``int(u * k)``: the distributions
are the ones the numpy version drew with ``Generator.choice`` and ``integers``.
"""

from __future__ import annotations

import numba
import numpy as np

from harness.sim.kube_scheduler import choice, fits_node
from harness.sim.latency_kernel import loaded_times, placement_terms

# indices into the cfg vector (ceenv.Dynamics writes it, as kcfg)
UTIL_LO, UTIL_HI, FAILED_AT_START, MAX_FAILED, FAILURE_PROB, MAX_STEPS, REP_LO, REP_HI, EQUAL, LARGE_SHARE, \
    START, MOVE_PENALTY, INVALID_PENALTY, SCALE_PROB, MAX_REPLICAS, LOAD_HI, LOAD_CLOSED, LOAD_KNEE = range(18)
N_CFG = 18
START_RANDOM, START_DEFAULT, START_MIX = 0.0, 1.0, 2.0


def reset_draws(N: int, S: int, P: int) -> int:
    """Uniform draws one episode start consumes (at most; the unused ones keep the count fixed)."""
    return 3 * N + S + 2 * P + 8


def step_draws(P: int) -> int:
    """Uniform draws one step consumes: a node failure's (the victim, a node per lost pod), then an
    autoscaling event's (whether, which service, the new count)."""
    return 1 + P + 3


@numba.njit(cache=True)
def used(bg_cpu, bg_mem, node, r_cpu, r_mem):
    """(cpu, mem) in use per node of one environment: the background plus the pods' requests."""
    cpu, mem = bg_cpu.copy(), bg_mem.copy()
    for p in range(len(node)):
        if node[p] >= 0:
            cpu[node[p]] += r_cpu[p]
            mem[node[p]] += r_mem[p]
    return cpu, mem


@numba.njit(cache=True)
def service_counts(node, slot_service, S, N):
    """(S, N) pods of each service on each node of one environment."""
    cnt = np.zeros((S, N), np.int64)
    for p in range(len(node)):
        if node[p] >= 0:
            cnt[slot_service[p], node[p]] += 1
    return cnt


@numba.njit(cache=True)
def permitted(affinity, spread, peers, here) -> bool:
    """The slot's constraints permit a node: its node_affinity, and its pod_antiaffinity (no other
    pod of its service there). peers: pods of the slot's service on the node; here: the slot's own
    pod is one of them."""
    return affinity and not (spread and peers - here > 0)


@numba.njit(cache=True)
def movable(at, n, up, cap_cpu, cap_mem, used_cpu, used_mem, cpu, mem, affinity, spread, peers) -> bool:
    """Moving a pod now on node ``at`` (-1: no pod) to node n is valid (eq. 1): n is up, not its
    node, has room for its requests (cpu, mem) and is permitted by its constraints."""
    return at >= 0 and at != n and fits_node(up, cap_cpu, cap_mem, used_cpu, used_mem, cpu, mem) and \
        permitted(affinity, spread, peers, False)


@numba.njit(cache=True)
def mask_row(nb, ub, cpu, mem, cnt, slot_service, r_cpu, r_mem, C_cpu, C_mem, affinity, spread, row):
    """One environment's valid moves, slot-major (row: P*N)."""
    N = len(ub)
    for p in range(len(nb)):
        s = slot_service[p]
        if nb[p] < 0:  # an empty slot cannot move (movable says so too; this skips the row)
            row[p * N:(p + 1) * N] = False
            continue
        for n in range(N):
            row[p * N + n] = movable(nb[p], n, ub[n], C_cpu[n], C_mem[n], cpu[n], mem[n], r_cpu[p], r_mem[p],
                                     affinity[p, n], spread[p], cnt[s, n])


@numba.njit(cache=True, error_model="numpy")
def env_latency(node, load, world, model, cfg, S, N) -> float:
    """D_msa of one environment's placement (NaN while a service has no pod); under a ``load`` > 0
    (requests/s, or closed-loop users with cfg LOAD_CLOSED), every pod's execution time is the
    queueing model's under it (latency_kernel.loaded_times)."""
    slot_service = world[0]
    E, RT, RS, RG, user_rtt, g_order, g_grp, g_call, g_callee, g_weight, g_edge, g_ecaller, g_ecallee, g_entries, \
        visits = model
    X = np.zeros((S, N))
    for p in range(len(node)):
        if node[p] >= 0:
            X[slot_service[p], node[p]] += 1
    if load > 0:
        busy = np.empty((S, N))
        loaded_times(X, E, RT, RS, RG, user_rtt, g_order, g_grp, g_call, g_callee, g_weight, g_edge, g_ecaller, g_ecallee,
                     g_entries, visits, load, cfg[LOAD_CLOSED] > 0, cfg[LOAD_KNEE], 1.0, busy)
        E = busy
    T_E, T_S, D_S = np.empty(S), np.empty(S), np.empty(len(g_ecaller))
    return placement_terms(X, E, RT, RS, RG, user_rtt, g_order, g_grp, g_call, g_callee, g_weight, g_edge, g_ecaller,
                           g_ecallee, g_entries, False, T_E, T_S, D_S)[1]


@numba.njit(cache=True, error_model="numpy")
def latencies(node, load, world, model, cfg, S, N, out):
    for b in range(node.shape[0]):
        out[b] = env_latency(node[b], load[b], world, model, cfg, S, N)


@numba.njit(cache=True)
def used_all(bg_cpu, bg_mem, node, world, cpu, mem):
    for b in range(node.shape[0]):
        cpu[b], mem[b] = used(bg_cpu[b], bg_mem[b], node[b], world[1], world[2])


@numba.njit(cache=True)
def masks(bg_cpu, bg_mem, node, up, world, out):
    """out (B, P*N + 1): the valid moves, slot-major, and Idle (always valid) last."""
    slot_service, r_cpu, r_mem, C_cpu, C_mem, affinity, spread = world
    B, P = node.shape
    N = up.shape[1]
    S = slot_service.max() + 1
    for b in range(B):
        cpu, mem = used(bg_cpu[b], bg_mem[b], node[b], r_cpu, r_mem)
        cnt = service_counts(node[b], slot_service, S, N)
        mask_row(node[b], up[b], cpu, mem, cnt, slot_service, r_cpu, r_mem, C_cpu, C_mem, affinity, spread, out[b])
        out[b, P * N] = True


@numba.njit(cache=True)
def observe(bg_cpu, bg_mem, node, up, latency, load, world, cfg, out):
    """out (B, 5N + P(3+N) + 1 [+ 1]) float32: per node free CPU and memory shares, capacities (shares
    of the largest), up; per slot occupied, its CPU (cores) and memory (GiB) requests, its node
    one-hot; the latency in seconds; under load (cfg LOAD_HI > 0), the load's share of LOAD_HI."""
    slot_service, r_cpu, r_mem, C_cpu, C_mem, affinity, spread = world
    B, P = node.shape
    N = up.shape[1]
    cmax, mmax = C_cpu.max(), C_mem.max()
    for b in range(B):
        cpu, mem = used(bg_cpu[b], bg_mem[b], node[b], r_cpu, r_mem)
        for n in range(N):
            out[b, n] = (C_cpu[n] - cpu[n]) / C_cpu[n]
            out[b, N + n] = (C_mem[n] - mem[n]) / C_mem[n]
            out[b, 2 * N + n] = C_cpu[n] / cmax
            out[b, 3 * N + n] = C_mem[n] / mmax
            out[b, 4 * N + n] = 1.0 if up[b, n] else 0.0
        k = 5 * N
        for p in range(P):
            on = node[b, p] >= 0
            out[b, k] = 1.0 if on else 0.0
            out[b, k + 1] = r_cpu[p] if on else 0.0
            out[b, k + 2] = r_mem[p] / 1024 if on else 0.0
            for n in range(N):
                out[b, k + 3 + n] = 1.0 if on and node[b, p] == n else 0.0
            k += 3 + N
        out[b, k] = latency[b] / 1000
        if cfg[LOAD_HI] > 0:
            out[b, k + 1] = load[b] / cfg[LOAD_HI]


@numba.njit(cache=True)
def room(up, cpu, mem, cnt, slot, world):
    """(N,) nodes with room for slot's (unplaced) pod that its constraints permit. cpu, mem: in use
    per node; cnt (S, N): pods per service and node."""
    slot_service, r_cpu, r_mem, C_cpu, C_mem, affinity, spread = world
    s = slot_service[slot]
    ok = np.empty(len(up), np.bool_)
    for n in range(len(up)):
        ok[n] = fits_node(up[n], C_cpu[n], C_mem[n], cpu[n], mem[n], r_cpu[slot], r_mem[slot]) and \
            permitted(affinity[slot, n], spread[slot], cnt[s, n], False)
    return ok


@numba.njit(cache=True)
def put(node, slot, n, cpu, mem, cnt, world) -> bool:
    """Slot's pod goes to node n (-1: stays pending); the running totals follow. True if placed."""
    node[slot] = n
    if n < 0:
        return False
    cpu[n] += world[1][slot]
    mem[n] += world[2][slot]
    cnt[world[0][slot], n] += 1
    return True


@numba.njit(cache=True)
def place_random(up, cpu, mem, cnt, node, slot, u, world) -> bool:
    """Put slot's pending pod on a node drawn uniformly among those with room that its constraints
    permit (pending when none): REACH's random placement, and self-healing's."""
    ok = room(up, cpu, mem, cnt, slot, world)
    k = ok.sum()
    if k == 0:
        return put(node, slot, -1, cpu, mem, cnt, world)
    pick = min(int(u * k), k - 1)
    for n in range(len(up)):
        if ok[n]:
            if pick == 0:
                return put(node, slot, n, cpu, mem, cnt, world)
            pick -= 1
    return False


@numba.njit(cache=True)
def place_default(up, cpu, mem, cnt, node, slot, world) -> bool:
    """Put slot's pending pod where Kubernetes' default scheduler would (kube_scheduler.choice)."""
    ok = room(up, cpu, mem, cnt, slot, world)
    peers = cnt[world[0][slot]].astype(np.float64)
    n = choice(up, world[3], world[4], cpu, mem, world[1][slot], world[2][slot], peers, 1.0, ok)
    return put(node, slot, n, cpu, mem, cnt, world)


@numba.njit(cache=True)
def totals(bg_cpu, bg_mem, node, world, S):
    """(cpu, mem, cnt): in use per node, and pods per service and node, of one environment."""
    cpu, mem = used(bg_cpu, bg_mem, node, world[1], world[2])
    return cpu, mem, service_counts(node, world[0], S, len(bg_cpu))


@numba.njit(cache=True)
def reset_env(bg_cpu, bg_mem, node, up, b, u, reps_given, world, cfg, S):
    """A new episode in environment b; returns its fail_at step (-1: no failure). ``u``: the
    uniform draws (``reset_draws``); ``reps_given``: replicas per service, or -1s to draw them."""
    C_cpu, C_mem = world[3], world[4]
    N = up.shape[1]
    k = 0
    lo, hi = cfg[UTIL_LO], cfg[UTIL_HI]
    for n in range(N):
        bg_cpu[b, n] = (lo + (hi - lo) * u[k]) * C_cpu[n]
        bg_mem[b, n] = (lo + (hi - lo) * u[k + N]) * C_mem[n]
        k += 1
    k += N
    up[b, :] = True
    if cfg[FAILED_AT_START] > 0 and u[k] < cfg[FAILED_AT_START]:
        m = min(int(cfg[MAX_FAILED]), N - 1)
        down = 1 + min(int(u[k + 1] * m), m - 1)
        perm = np.arange(N)
        for i in range(down):  # a partial Fisher-Yates shuffle: `down` distinct nodes
            j = i + min(int(u[k + 2 + i] * (N - i)), N - i - 1)
            perm[i], perm[j] = perm[j], perm[i]
            up[b, perm[i]] = False
    k += 2 + N
    node[b, :] = -1
    fail_at = -1
    if u[k] < cfg[FAILURE_PROB]:
        span = int(cfg[MAX_STEPS]) - 1
        fail_at = 1 + min(int(u[k + 1] * span), span - 1)
    k += 2
    rlo, rhi = int(cfg[REP_LO]), int(cfg[REP_HI])
    reps = np.empty(S, np.int64)
    if reps_given[0] >= 0:
        reps[:] = reps_given
    elif cfg[LARGE_SHARE] > 0 and u[k] < cfg[LARGE_SHARE]:
        reps[:] = rhi
    elif cfg[EQUAL] > 0:
        reps[:] = rlo + min(int(u[k + 1] * (rhi - rlo + 1)), rhi - rlo)
    else:
        for s in range(S):
            reps[s] = rlo + min(int(u[k + 2 + s] * (rhi - rlo + 1)), rhi - rlo)
    k += 2 + S
    slots = np.empty(reps.sum(), np.int64)
    i = 0
    for s in range(S):
        for r in range(reps[s]):
            slots[i] = s * int(cfg[MAX_REPLICAS]) + r
            i += 1
    start = cfg[START]
    by_default = start == START_DEFAULT or (start == START_MIX and u[k] < 0.5)
    k += 1
    placed = True
    cpu, mem, cnt = totals(bg_cpu[b], bg_mem[b], node[b], world, S)
    for i in range(len(slots)):
        if by_default:
            placed &= place_default(up[b], cpu, mem, cnt, node[b], slots[i], world)
        else:
            placed &= place_random(up[b], cpu, mem, cnt, node[b], slots[i], u[k + i], world)
    k += len(node[b])
    if not placed:  # no room: retry with an emptier cluster, every node up
        bg_cpu[b, :] = 0
        bg_mem[b, :] = 0
        up[b, :] = True
        node[b, :] = -1
        cpu, mem, cnt = totals(bg_cpu[b], bg_mem[b], node[b], world, S)
        for i in range(len(slots)):
            place_random(up[b], cpu, mem, cnt, node[b], slots[i], u[k + i], world)
    return fail_at


@numba.njit(cache=True)
def rescale(bg_cpu, bg_mem, node, up, u, world, S, max_replicas) -> bool:
    """The HPA rescales one service (``u``: 2 draws): the service drawn uniformly, its new replica
    count uniformly among the other counts in 1..max_replicas. New pods take the service's lowest
    free slots, placed where the default scheduler puts them (pending when nothing fits); a scale-down
    removes the highest slots' pods, the newest ones, as the live autoscaler stops them. Returns
    whether any pod came or went."""
    if max_replicas < 2:
        return False
    s = min(int(u[0] * S), S - 1)
    first = s * max_replicas
    have = 0
    for r in range(max_replicas):
        have += node[first + r] >= 0
    k = min(int(u[1] * (max_replicas - 1)), max_replicas - 2)  # one of the max_replicas - 1 other counts
    want = k + 1 if k + 1 < have else k + 2
    if want > have:
        cpu, mem, cnt = totals(bg_cpu, bg_mem, node, world, S)
        for r in range(max_replicas):
            if have < want and node[first + r] < 0:
                place_default(up, cpu, mem, cnt, node, first + r, world)
                have += 1
    else:
        for r in range(max_replicas - 1, -1, -1):
            if have > want and node[first + r] >= 0:
                node[first + r] = -1
                have -= 1
    return True


@numba.njit(cache=True, error_model="numpy")
def reset_envs(which, u, reps_given, bg_cpu, bg_mem, node, up, steps, fail_at, latency, load, world, model, cfg, S):
    """Start a new episode in every environment b with which[b]."""
    N = up.shape[1]
    for b in range(len(which)):
        if which[b]:
            fail_at[b] = reset_env(bg_cpu, bg_mem, node, up, b, u[b], reps_given, world, cfg, S)
            steps[b] = 0
            latency[b] = env_latency(node[b], load[b], world, model, cfg, S, N)


@numba.njit(cache=True, error_model="numpy")
def step_envs(actions, u, bg_cpu, bg_mem, node, up, steps, fail_at, latency, load, world, model, cfg, S, reward,
              terminated, truncated):
    """The transition (see ceenv's docstring), in place. ``u`` (B, step_draws(P)): draws for a node
    failure (the victim, then a new node for each pod it held) and for an autoscaling event."""
    slot_service, r_cpu, r_mem, C_cpu, C_mem, affinity, spread = world
    B, P = node.shape
    N = up.shape[1]
    idle_action = P * N
    for b in range(B):
        a = actions[b]
        idle = a == idle_action
        valid = idle
        if 0 <= a < idle_action:
            cpu, mem = used(bg_cpu[b], bg_mem[b], node[b], r_cpu, r_mem)
            p, n = a // N, a % N
            peers = 0
            for q in range(P):
                peers += node[b, q] == n and slot_service[q] == slot_service[p]
            valid = movable(node[b, p], n, up[b, n], C_cpu[n], C_mem[n], cpu[n], mem[n], r_cpu[p], r_mem[p],
                            affinity[p, n], spread[p], peers)
        before = latency[b]
        terminated[b] = not valid or idle
        reward[b] = 0.0 if valid else -cfg[INVALID_PENALTY]
        move = valid and not idle
        if move:
            node[b, a // N] = a % N
        steps[b] += 1
        # a node fails: its pods are re-placed at random where they fit; not the agent's doing
        failing = steps[b] == fail_at[b] and not terminated[b]
        if failing:
            alive = 0
            for n in range(N):
                alive += up[b, n]
            pick = min(int(u[b, 0] * alive), alive - 1)
            victim = -1
            for n in range(N):
                if up[b, n]:
                    if pick == 0:
                        victim = n
                        break
                    pick -= 1
            up[b, victim] = False
            lost = np.flatnonzero(node[b] == victim)
            node[b, lost] = -1
            cpu, mem, cnt = totals(bg_cpu[b], bg_mem[b], node[b], world, S)
            for i in range(len(lost)):
                place_random(up[b], cpu, mem, cnt, node[b], lost[i], u[b, 1 + i], world)
        # the HPA rescales a service: neither is the agent's doing
        scaling = not terminated[b] and u[b, 1 + P] < cfg[SCALE_PROB] and \
            rescale(bg_cpu[b], bg_mem[b], node[b], up[b], u[b, 2 + P:], world, S, int(cfg[MAX_REPLICAS]))
        after = env_latency(node[b], load[b], world, model, cfg, S, N) if move or failing or scaling else before
        if failing or scaling:
            before = after  # the event's effect is not the move's reward
        if move:
            reward[b] = before - after - cfg[MOVE_PENALTY]
        latency[b] = after
        truncated[b] = steps[b] >= cfg[MAX_STEPS] and not terminated[b]
