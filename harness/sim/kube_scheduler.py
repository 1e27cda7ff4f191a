"""Kubernetes' default scheduler's rule, on arrays: part of the world the simulator models (where
a pod goes when nobody else decides: CEEnv's episode starts, self-healing) and the ``default``
policy's choice, so both use this one definition.

Filter the nodes that are up and have room (NodeResourcesFit), score LeastAllocated +
BalancedAllocation + spreading a service's replicas over nodes, highest score wins (the first
node among equals).
"""

from __future__ import annotations

import numba
import numpy as np

EPS = 1e-9


def fits(up: np.ndarray, cap_cpu: np.ndarray, cap_mem: np.ndarray, used_cpu: np.ndarray, used_mem: np.ndarray,
         cpu: float, mem: float) -> np.ndarray:
    """(N,) nodes that are up and can take a pod requesting ``cpu`` cores and ``mem`` MiB (``fits_node``
    vectorised)."""
    return up & (cap_cpu - used_cpu >= cpu - EPS) & (cap_mem - used_mem >= mem - EPS)


@numba.njit(cache=True)
def fits_node(up, cap_cpu, cap_mem, used_cpu, used_mem, cpu, mem) -> bool:
    """``fits`` for one node, compiled; scalars only (array arguments make a call cost more than the test)."""
    return up and cap_cpu - used_cpu >= cpu - EPS and cap_mem - used_mem >= mem - EPS


def default_choice(up: np.ndarray, cap_cpu: np.ndarray, cap_mem: np.ndarray, used_cpu: np.ndarray,
                   used_mem: np.ndarray, cpu: float, mem: float, peers: np.ndarray,
                   spread_weight: float = 1.0, allowed: np.ndarray | None = None) -> int | None:
    """The node index kube-scheduler picks for one pod, or None when none fits. ``peers``: (N,)
    pods of the same service already on each node; ``allowed``: (N,) what the pod's affinity and
    anti-affinity permit (the filter step's other plugins)."""
    f64 = lambda a: np.ascontiguousarray(a, dtype=np.float64)  # noqa: E731  one compiled signature
    ok = np.ones(len(up), np.bool_) if allowed is None else np.ascontiguousarray(allowed, dtype=np.bool_)
    node = choice(np.ascontiguousarray(up, dtype=np.bool_), f64(cap_cpu), f64(cap_mem), f64(used_cpu), f64(used_mem),
                  float(cpu), float(mem), f64(peers), float(spread_weight), ok)
    return None if node < 0 else int(node)


@numba.njit(cache=True)
def choice(up, cap_cpu, cap_mem, used_cpu, used_mem, cpu, mem, peers, spread_weight, allowed) -> int:
    """``default_choice`` compiled (also called by CEEnv's compiled episode starts): -1 when none fits."""
    most = 0.0
    for n in range(len(up)):
        most = max(most, peers[n])
    best, best_score = -1, -np.inf
    for n in range(len(up)):
        if not (allowed[n] and fits_node(up[n], cap_cpu[n], cap_mem[n], used_cpu[n], used_mem[n], cpu, mem)):
            continue
        cpu_f = (used_cpu[n] + cpu) / cap_cpu[n]
        mem_f = (used_mem[n] + mem) / cap_mem[n]
        least = 100 * ((1 - cpu_f) + (1 - mem_f)) / 2
        balanced = 100 * (1 - abs(cpu_f - mem_f))
        spread = 100 * (1 - peers[n] / max(1.0, most)) if most > 0 else 100.0
        score = least + balanced + spread_weight * spread
        if score > best_score:  # the first node among equals
            best, best_score = n, score
    return best
