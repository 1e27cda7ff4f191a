"""Kubernetes' default scheduler's rule, on arrays: part of the world the simulator models (where
a pod goes when nobody else decides: CEEnv's episode starts, self-healing) and the ``default``
policy's choice, so both use this one definition.

Filter the nodes that are up and have room (NodeResourcesFit), score LeastAllocated +
BalancedAllocation + spreading a service's replicas over nodes, highest score wins (the first
node among equals).
"""

from __future__ import annotations

import numpy as np

EPS = 1e-9


def fits(up: np.ndarray, cap_cpu: np.ndarray, cap_mem: np.ndarray, used_cpu: np.ndarray, used_mem: np.ndarray,
         cpu: float, mem: float) -> np.ndarray:
    """(N,) nodes that are up and can take a pod requesting ``cpu`` cores and ``mem`` MiB."""
    return up & (cap_cpu - used_cpu >= cpu - EPS) & (cap_mem - used_mem >= mem - EPS)


def default_choice(up: np.ndarray, cap_cpu: np.ndarray, cap_mem: np.ndarray, used_cpu: np.ndarray,
                   used_mem: np.ndarray, cpu: float, mem: float, peers: np.ndarray,
                   spread_weight: float = 1.0, allowed: np.ndarray | None = None) -> int | None:
    """The node index kube-scheduler picks for one pod, or None when none fits. ``peers``: (N,)
    pods of the same service already on each node; ``allowed``: (N,) what the pod's affinity and
    anti-affinity permit (the filter step's other plugins)."""
    ok = fits(up, cap_cpu, cap_mem, used_cpu, used_mem, cpu, mem)
    if allowed is not None:
        ok &= allowed
    if not ok.any():
        return None
    cpu_f = (used_cpu + cpu) / cap_cpu
    mem_f = (used_mem + mem) / cap_mem
    least = 100 * ((1 - cpu_f) + (1 - mem_f)) / 2
    balanced = 100 * (1 - np.abs(cpu_f - mem_f))
    spread = 100 * (1 - peers / max(1, peers.max())) if peers.max() else np.full(len(up), 100.0)
    score = np.where(ok, least + balanced + spread_weight * spread, -np.inf)
    return int(np.argmax(score))
