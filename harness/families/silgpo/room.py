"""Whether any deployment can leave an instance of SIL-GPO's episode with no server to go to.

``DeployEnv`` refuses a misfit and leaves out an instance that fits nowhere (``dropped``), where
the authors' code would place it over capacity. Whether that can happen at all is a property of
the instance, not of a policy: an episode places ``ServiceGraph.to_place()`` in a fixed order from
the fixed start, so until one is left out the instances placed before instance t are always
the same multiset, and a policy chooses only where. Instance t can find no room exactly when
some packing of the first t instances within capacity (every packing within capacity is
reachable step by step: usage only grows) blocks every server, each by one of its resources
(a server the start overfills takes nothing, as ``fits`` says). That is a small integer
program, one per step, answered exactly by HiGHS (the resources are whole units); where none
is feasible, no policy, learned or not, can drop an instance, and every deployment's delay
counts every instance.
"""

from __future__ import annotations

import numpy as np

from harness.families.silgpo.world import ServiceGraph

RESOURCES = 3  # CPU cores, GPUs, storage GB: whole units (``ServiceGraph.room``)


def packing_without_room(g: ServiceGraph, t: int) -> np.ndarray | None:
    """A deployment (S, N) of the start and the first ``t`` instances of the episode, within
    capacity, on which instance ``t`` fits on no server (``ServiceGraph.fits`` all false); None
    when there is none."""
    from harness.solvers.milp import Milp

    order = g.to_place()
    m, counts = order[t], np.bincount(order[:t], minlength=g.S)
    X0 = g.initial()
    start = np.array(g.used(X0), float)  # (3, N): the start's instances are fixed
    cap = np.array([g.cpu, g.gpu, g.mem], float)
    need = np.array([g.s_cpu, g.s_gpu, g.s_mem], float)  # (3, S)
    if not (np.array_equal(cap, cap.round()) and np.array_equal(need, need.round())):
        raise ValueError("room: the resources must be whole units (cores, GPUs, GB)")
    strict = 1.0 if g.compat else 0.0  # the code's storage test: used + need < capacity
    most = cap - np.array([[0.0], [0.0], [strict]])  # usage any fitting placement leaves at most
    blocks = cap - need[:, m:m + 1] + np.array([[1.0], [1.0], [1.0 - strict]])  # usage at which m no longer fits
    p = Milp()
    services = np.flatnonzero(counts)
    x = {s: p.add_vars(g.N, integer=True) for s in services}  # instances of s per server
    z = p.add_vars(RESOURCES * g.N, upper=1, integer=True).reshape(RESOURCES, g.N)  # the resource blocking n
    for s in services:
        p.add_row(x[s], 1.0, counts[s], counts[s])
    over = (start > most).any(axis=0)  # a server the start already overfills: nothing more fits on it
    for n in range(g.N):
        p.add_row(z[:, n], 1.0, 1, 1)
        cols = [x[s][n] for s in services]
        if over[n]:
            p.add_row(cols, 1.0, hi=0)
        for r in range(RESOURCES):
            coefs = [need[r, s] for s in services]
            p.add_row(cols, coefs, hi=max(most[r, n] - start[r, n], 0.0))
            p.add_row(cols + [z[r, n]], coefs + [-blocks[r, n]], lo=-start[r, n])
    solution = p.solve(time_limit=60)
    if solution.status not in ("optimal", "infeasible"):
        raise RuntimeError(f"HiGHS gave no answer for instance {t}: {solution.status}")
    if solution.status == "infeasible":
        return None
    X = X0.copy()
    for s in services:
        X[s] += np.rint(solution.values[x[s]]).astype(int)
    return X


def steps_without_room(g: ServiceGraph) -> list[int]:
    """The instances of the episode that some deployment can leave with no room (empty: every
    deployment places every instance)."""
    return [t for t in range(len(g.to_place())) if packing_without_room(g, t) is not None]
