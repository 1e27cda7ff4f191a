"""HephaestusForge's rules, written once and compiled, over N environments (``world`` says them
in words): which clusters have room (the mask, eq. 3), the spreads (Alg. 1's FFD and FFI, §6's
BF1B1), what an action places, the latency drift, requests leaving, the reward (eqs. 4-10), the
Gini (eq. 10) and the observation. The step-by-step env is a batch of one, the vector form a
batch of N: both are ``world_vector.MultiClusterVector``'s step over these kernels. Each rule is
written for one environment and the kernels loop over the environments.

The kernels take the state as ``world_vector.MultiClusterVector`` holds it, in three tuples:

- ``cl``, the clusters: (cap_cpu, cap_mem, cost, alloc_cpu, alloc_mem, placed, live), each
  (N, C) (placed: the episode's replicas per cluster, live: those running), and lat (N, C, C);
- ``rq``, the request of the moment: (r, cpu, mem, threshold, t_r), each (N,);
- ``sl``, the running requests' slots: (dep, split, s_cpu, s_mem, s_spread): departure (N, K),
  inf for a free slot, replicas per cluster (N, K, C), the request's CPU and memory, placed by a
  spread or not.

Randomness comes in as draws the caller makes with its numpy Generator: the drift factors,
uniform in [1, 1.15), in the order they are used. Dense draws (the vector form's stream) hold
one for every cluster of every environment concerned, used or not; otherwise (the step-by-step
env's) one per cluster that drifts. Sums are numpy's pairwise summation (``_sum``), so that every
number is the one the rules gave when they were numpy code, bit for bit.
"""

from __future__ import annotations

import numba
import numpy as np

from harness.families.hephaestus.config import EXTRA_ROWS, MAX_COST, MAX_DELAY, MIN_COST, MIN_DELAY, SPREADS

FFD, BF1B1 = SPREADS.index("ffd"), SPREADS.index("bf1b1")
UP_SPREAD, UP_WHOLE, DOWN_SPREAD = 1.05, 1.15, 1.10  # the code's drift factors (hf_compat)


@numba.njit(cache=True)
def _block(x, lo, n) -> float:
    """numpy's pairwise sum of x[lo:lo + n], n ≤ 128: eight accumulators from n = 8 on."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += x[i]
        return res
    r0, r1, r2, r3 = x[lo], x[lo + 1], x[lo + 2], x[lo + 3]
    r4, r5, r6, r7 = x[lo + 4], x[lo + 5], x[lo + 6], x[lo + 7]
    i = 8
    while i < n - n % 8:
        r0, r1, r2, r3 = r0 + x[lo + i], r1 + x[lo + i + 1], r2 + x[lo + i + 2], r3 + x[lo + i + 3]
        r4, r5, r6, r7 = r4 + x[lo + i + 4], r5 + x[lo + i + 5], r6 + x[lo + i + 6], r7 + x[lo + i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += x[lo + i]
        i += 1
    return res


@numba.njit(cache=True)
def _sum(x) -> float:
    """numpy's sum of a 1-D array, to the bit: blocks of at most 128 summed by ``_block``, a longer
    run halved (at a multiple of 8) and its halves' sums added. numpy recurses; here a stack of the
    runs still to sum does (a cached numba function may not call itself)."""
    if len(x) <= 128:
        return _block(x, 0, len(x))
    run_lo, run_n, halved = np.empty(64, np.int64), np.empty(64, np.int64), np.zeros(64, np.bool_)
    sums = np.empty(64)
    run_lo[0], run_n[0], top, done = 0, len(x), 1, 0
    while top:
        lo, n = run_lo[top - 1], run_n[top - 1]
        if n <= 128:
            sums[done] = _block(x, lo, n)
            done, top = done + 1, top - 1
        elif halved[top - 1]:  # both halves summed
            sums[done - 2] += sums[done - 1]
            done, top = done - 1, top - 1
        else:
            half = n // 2 - n // 2 % 8
            halved[top - 1] = True
            run_lo[top], run_n[top], halved[top] = lo + half, n - half, False
            run_lo[top + 1], run_n[top + 1], halved[top + 1] = lo, half, False
            top += 2
    return sums[0]


@numba.njit(cache=True)
def _delta(lat_i, c) -> float:
    """δ_c: the mean of cluster c's latency row (its own 0 included, as the code computes it)."""
    return _sum(lat_i[c]) / lat_i.shape[1]


@numba.njit(cache=True)
def _within(cl, i, c, more_cpu, more_mem, fill) -> bool:
    """Cluster c of env i stays within ``fill`` of its capacity with ``more_cpu``, ``more_mem``."""
    return cl[3][i, c] + more_cpu <= fill * cl[0][i, c] and cl[4][i, c] + more_mem <= fill * cl[1][i, c]


@numba.njit(cache=True)
def _stable_order(key, out) -> None:
    """The indices of ``key`` in increasing order, ties in index order (numpy's stable argsort)."""
    for j in range(len(key)):
        x, k = j, j
        while k > 0 and key[out[k - 1]] > key[x]:
            out[k] = out[k - 1]
            k -= 1
        out[k] = x


@numba.njit(cache=True)
def _first_fit(cpu, mem, r, free_cpu, free_mem, decreasing, out) -> None:
    """Alg. 1: Δ = the fewest replicas any cluster takes (at most R − 1, to really spread); walk the
    clusters by free CPU, giving Δ where Δ fit, else one; then one more to each that fits."""
    C = len(free_cpu)
    least = np.inf
    for c in range(C):
        least = min(least, min(free_cpu[c] / cpu, free_mem[c] / mem))
    d = min(np.ceil(least), r - 1)
    order = np.empty(C, np.int64)
    _stable_order(-free_cpu if decreasing else free_cpu, order)
    left = r
    for c in order:
        if left > 0 and d < left and cpu * d < free_cpu[c] and mem * d < free_mem[c]:
            out[c] += d
            left -= d
        elif left > 0 and cpu < free_cpu[c] and mem < free_mem[c]:
            out[c] += 1.0
            left -= 1.0
    for c in range(C):
        if left > 0 and cpu < free_cpu[c] and mem < free_mem[c]:
            out[c] += 1.0
            left -= 1.0


@numba.njit(cache=True)
def _best_fit_one_by_one(cpu, mem, r, free_cpu, free_mem, out) -> None:
    """Each replica to the cluster it leaves least free CPU + memory in (§6); ties to the one with
    less free CPU, then the lower index. Uses up ``free_cpu`` and ``free_mem``."""
    order = np.empty(len(free_cpu), np.int64)
    for _ in range(int(r)):
        _stable_order(free_cpu, order)
        best, best_left = -1, np.inf
        for c in order:
            left = free_cpu[c] - cpu + free_mem[c] - mem
            if free_cpu[c] >= cpu and free_mem[c] >= mem and left < best_left:
                best, best_left = c, left
        if best >= 0:
            out[best] += 1.0
            free_cpu[best] -= cpu
            free_mem[best] -= mem


@numba.njit(cache=True)
def _spread(i, kind, cl, rq, hf_compat, out) -> None:
    """Into ``out`` (C,): env i's request's replicas per cluster by spread heuristic ``kind``."""
    free_cpu, free_mem = cl[0][i] - cl[3][i], cl[1][i] - cl[4][i]
    r, cpu, mem = rq[0][i], rq[1][i], rq[2][i]
    if kind == BF1B1:
        _best_fit_one_by_one(cpu, mem, r, free_cpu, free_mem, out)
    else:  # the code's FFI runs FFD
        _first_fit(cpu, mem, r, free_cpu, free_mem, kind == FFD or hf_compat, out)


@numba.njit(cache=True)
def spread(kind, cl, rq, hf_compat, out) -> None:
    """Into ``out`` (N, C; zeros): every env's request's replicas per cluster by spread heuristic
    ``kind`` (an index of ``SPREADS``)."""
    for i in range(out.shape[0]):
        _spread(i, kind, cl, rq, hf_compat, out[i])


@numba.njit(cache=True)
def masks(cl, rq, fill, out) -> None:
    """Into ``out`` (N, C+4): deploy-all where a cluster takes all R replicas (eq. 3); spreading and
    rejecting always."""
    N, C = cl[0].shape
    for i in range(N):
        more_cpu, more_mem = rq[0][i] * rq[1][i], rq[0][i] * rq[2][i]
        for c in range(C):
            out[i, c] = _within(cl, i, c, more_cpu, more_mem, fill)
        out[i, C:] = True


@numba.njit(cache=True)
def decide(actions, cl, rq, fill, hf_compat, split, ok, reward) -> None:
    """Per env, into ``split`` (N, C; zeros) and ``ok``: its request's replicas per cluster if it
    takes its action, and whether that places it; not: the reject action, a cluster without room, a
    spread of one replica, one placing fewer than R (the code places what it found) or one that does
    not fit. Into ``reward``, a rejection's: −1 while some cluster had room; else 0 (the code's +1)."""
    N, C = cl[0].shape
    for i in range(N):
        r, cpu, mem = rq[0][i], rq[1][i], rq[2][i]
        room = False
        for c in range(C):
            room |= _within(cl, i, c, r * cpu, r * mem, fill)
        reward[i] = -1.0 if room else (1.0 if hf_compat else 0.0)
        a = actions[i]
        if a < C:
            c = a % C
            ok[i] = _within(cl, i, c, r * cpu, r * mem, fill)
            if ok[i]:
                split[i, c] = r
        elif a < C + len(SPREADS) and r > 1:
            s = split[i]
            _spread(i, a - C, cl, rq, hf_compat, s)
            fits = hf_compat or _sum(s) >= r
            for c in range(C):
                fits &= _within(cl, i, c, s[c] * cpu, s[c] * mem, fill)
            ok[i] = fits
            if not fits:
                s[:] = 0.0


@numba.njit(cache=True)
def _drift(lat_i, c, factor) -> None:
    """Cluster c's latency row and column times ``factor``, within [1, 1000] ms, its own 0 kept."""
    for b in range(lat_i.shape[0]):
        lat_i[c, b] = min(max(lat_i[c, b] * factor, MIN_DELAY), MAX_DELAY)
    lat_i[c, c] = 0.0
    lat_i[:, c] = lat_i[c]


@numba.njit(cache=True)
def _gini(loads) -> float:
    """Σ_i Σ_j |L_i − L_j| / (2 n² L̄) (eq. 10); 0 when nothing is placed."""
    C = len(loads)
    mean = _sum(loads) / C
    if not mean > 0:
        return 0.0
    diff = np.empty(C * C)
    for a in range(C):
        for b in range(C):
            diff[a * C + b] = abs(loads[a] - loads[b])
    return _sum(diff) / (2 * C * C * mean)


@numba.njit(cache=True)
def gini(loads, rows, out) -> None:
    """Into ``out``: the Gini of each env in ``rows`` over ``loads`` (N, C): the replicas running
    per cluster; the code's, the replicas the episode has placed in each, never decremented."""
    for j in range(len(rows)):
        out[j] = _gini(loads[rows[j]])


@numba.njit(cache=True)
def place(acc, split, actions, u, dense, cl, rq, hf_compat, drifts, weights, latency, cost, cpu_pct, reward) -> None:
    """Each env in ``acc`` places its request as ``split[env]`` (by a spread action where its
    action is one): allocation, replicas, the latencies drifting up (not a testbed's: ``drifts``
    False), and per env, into the outputs (in ``acc``'s order; ``reward`` by env): its latency
    λ_d (the paper's: the one decided on; the code reads a deploy-all's after its drift), cost per
    replica, the CPU % of its clusters (replica-weighted; the code sums a spread's over every
    cluster) and its reward (eqs. 4-9): ω_l(1 − λ̂) + ω_c(1 − Γ̂) + ω_i(1 − G), latency and cost
    min-max normalised on [1, 1000] ms and [1, 16]. The drift factor: the paper's random one, up to
    15 %; the code's ×1.15 for deploy-all, ×1.05 for every cluster of a spread."""
    cap_cpu, cost_of, alloc_cpu, alloc_mem, placed, live, lat = cl[0], cl[2], cl[3], cl[4], cl[5], cl[6], cl[7]
    C = alloc_cpu.shape[1]
    wl, wc, wi = weights
    terms = np.empty(C)
    k = 0
    for j in range(len(acc)):
        i, s = acc[j], split[acc[j]]
        r, cpu, mem, spread_ = rq[0][i], rq[1][i], rq[2][i], actions[acc[j]] >= C
        for c in range(C):
            alloc_cpu[i, c] += s[c] * cpu
            alloc_mem[i, c] += s[c] * mem
            placed[i, c] += s[c]
            live[i, c] += s[c]
        if not hf_compat:
            for c in range(C):
                terms[c] = _delta(lat[i], c) * s[c]
            for c in range(C):
                if s[c] > 0:
                    f, k = (u[j * C + c], k) if dense else (u[k], k + 1)
                    if drifts:
                        _drift(lat[i], c, f)
            lam = _sum(terms) / r
        elif spread_:  # every cluster of a spread drifts, one after another, each δ read before its own drift
            lam = 0.0
            for c in range(C):
                lam += _delta(lat[i], c) * s[c]
                if drifts:
                    _drift(lat[i], c, UP_SPREAD)
            lam /= r
        else:
            for c in range(C):
                if s[c] > 0 and drifts:
                    _drift(lat[i], c, UP_WHOLE)
            for c in range(C):
                terms[c] = _delta(lat[i], c) * s[c]
            lam = _sum(terms) / r
        for c in range(C):
            terms[c] = cost_of[i, c] * s[c]
        gamma = _sum(terms) / r
        for c in range(C):
            terms[c] = 100 * alloc_cpu[i, c] / cap_cpu[i, c] * (1.0 if hf_compat and spread_ else s[c])
        latency[j], cost[j], cpu_pct[j] = lam, gamma, _sum(terms) / r
        inequality = _gini(placed[i] if hf_compat else live[i])
        reward[i] = wl * (1 - (lam - MIN_DELAY) / (MAX_DELAY - MIN_DELAY)) + \
            wc * (1 - (gamma - MIN_COST) / (MAX_COST - MIN_COST)) + wi * (1 - inequality)


@numba.njit(cache=True)
def hold(acc, split, actions, now, lifetime, rq, sl, hf_compat) -> bool:
    """Each env in ``acc`` holds its request, just placed, in its first free slot until its
    departure: now plus its lifetime (the code never sets it: the request leaves at the next
    arrival). False, and nothing held, when an env has no free slot."""
    dep, split_of, s_cpu, s_mem, s_spread = sl
    free = np.empty(len(acc), np.int64)
    for j in range(len(acc)):
        free[j] = np.argmax(dep[acc[j]] == np.inf)
        if dep[acc[j], free[j]] != np.inf:
            return False
    C = split.shape[1]
    for j in range(len(acc)):
        i, k = acc[j], free[j]
        dep[i, k] = now[i] if hf_compat else now[i] + lifetime[i]
        split_of[i, k] = split[i]
        s_cpu[i, k], s_mem[i, k], s_spread[i, k] = rq[1][i], rq[2][i], actions[i] >= C
    return True


@numba.njit(cache=True)
def due(dep, split, limit):
    """(envs, slots, drifting clusters) of the running requests departing before ``limit`` (N,),
    in the order they leave: round by round, in each the earliest of every env that has one left
    (ties to the lower slot); within an env, by departure."""
    N, K = dep.shape
    count = np.zeros(N, np.int64)
    order = np.empty((N, K), np.int64)
    for i in range(N):
        for s in range(K):
            if dep[i, s] < limit[i]:
                k = count[i]
                while k > 0 and dep[i, order[i, k - 1]] > dep[i, s]:
                    order[i, k] = order[i, k - 1]
                    k -= 1
                order[i, k] = s
                count[i] += 1
    envs, slots = np.empty(count.sum(), np.int64), np.empty(count.sum(), np.int64)
    p, drifting = 0, 0
    for rnd in range(count.max() if N else 0):
        for i in range(N):
            if count[i] > rnd:
                envs[p], slots[p] = i, order[i, rnd]
                drifting += np.count_nonzero(split[i, order[i, rnd]])
                p += 1
    return envs, slots, drifting


@numba.njit(cache=True)
def release(envs, slots, u, dense, cl, sl, hf_compat, drifts) -> None:
    """The requests in slots (envs[p], slots[p]) leave, in that order: their replicas and room
    freed, their clusters' latencies drifting down (the paper's random factor; the code's ÷1.15
    for deploy-all, ÷1.10 for a spread)."""
    alloc_cpu, alloc_mem, live, lat = cl[3], cl[4], cl[6], cl[7]
    dep, split, s_cpu, s_mem, s_spread = sl
    C = alloc_cpu.shape[1]
    k = 0
    for p in range(len(envs)):
        i, s = envs[p], slots[p]
        for c in range(C):
            alloc_cpu[i, c] -= split[i, s, c] * s_cpu[i, s]
            alloc_mem[i, c] -= split[i, s, c] * s_mem[i, s]
            live[i, c] -= split[i, s, c]
        for c in range(C):
            if split[i, s, c] > 0:
                if hf_compat:
                    f = DOWN_SPREAD if s_spread[i, s] else UP_WHOLE
                else:
                    f, k = (u[p * C + c], k) if dense else (u[k], k + 1)
                if drifts:
                    _drift(lat[i], c, 1 / f)
        dep[i, s] = np.inf


@numba.njit(cache=True)
def observe(cl, rq, out) -> None:
    """Into ``out`` (N, C+4, 10): a row per cluster (allocated and capacity CPU and memory, δ_c) and
    four rows of −1 (the spread actions and reject), each with the request (R, ω_cpu, ω_mem, Δ_r,
    T_r) beside it."""
    cap_cpu, cap_mem, alloc_cpu, alloc_mem, lat = cl[0], cl[1], cl[3], cl[4], cl[7]
    N, C = cap_cpu.shape
    for i in range(N):
        for c in range(C):
            out[i, c, 0], out[i, c, 1], out[i, c, 2], out[i, c, 3] = alloc_cpu[i, c], cap_cpu[i, c], \
                alloc_mem[i, c], cap_mem[i, c]
            out[i, c, 4] = _delta(lat[i], c)
        out[i, C:, :5] = -1.0
        for c in range(C + EXTRA_ROWS):
            out[i, c, 5], out[i, c, 6], out[i, c, 7], out[i, c, 8], out[i, c, 9] = rq[0][i], rq[1][i], rq[2][i], \
                rq[3][i], rq[4][i]


@numba.njit(cache=True)
def delta(lat, out) -> None:
    """Into ``out`` (N, C): δ_c of every cluster."""
    for i in range(lat.shape[0]):
        for c in range(lat.shape[1]):
            out[i, c] = _delta(lat[i], c)


def episode_row(offered, accepted, latency, cost, cpu_pct, inequality) -> dict:
    """What the authors' logs hold per episode: its rejection rate, the means over its accepted
    requests (NaN when none was) and the Gini at its end."""
    return {"rejection": 1 - accepted / max(1, offered), "cost": cost, "latency": latency, "cpu_pct": cpu_pct,
            "gini": inequality}
