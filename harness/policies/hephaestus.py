"""HephaestusForge's greedy baselines (paper 001, §5.4) on its multi-cluster world
(``harness.sim.multicluster``): each puts all R replicas in one cluster that has room, or rejects.

- ``cpu-greedy``: the least CPU-allocated share;
- ``binpack-greedy``: the most;
- ``hf-latency-greedy``: a cluster chosen at random among those whose δ_c is within the request's
  threshold Δ_r (the paper's Latency-greedy; harness's ``latency-greedy`` is REACH's heuristic);
- ``karmada-greedy``: the most replicas available, the mean over CPU and memory of free / request
  (Karmada's available-replicas estimate).

Two heuristics of harness's answer the question the paper leaves open — how much of Fig. 8
(the agents reject far less as R grows) is learning, and how much is the spread actions the
agents have and the baselines lack:

- ``spread-ffd``: binpack-greedy's cluster when one has room for all R; otherwise the FFD spread
  (the agents' action C), which the world rejects if it does not fit;
- ``spread-bf1b1``: the same with the BF1B1 spread (action C + 2).

``first_three``: the authors' baseline script (run_baselines.py) slices the mask with the wrong
width (``mask[:-(C + 1)]`` of C + 4 actions), so it only ever considers the first three clusters,
whatever C; their published logs match every cluster considered (binpack's cost: 3.67 logged,
3.77 over all four clusters, 4.37 over the first three; studies/hephaestus), so the default is
every cluster and ``first_three`` reproduces the script.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from harness.sim.multicluster import EXTRA_ROWS, SPREADS, MultiClusterEnv


def _candidates(env: MultiClusterEnv, first_three: bool) -> np.ndarray:
    room = env.action_masks()[:env.cfg.clusters]
    if first_three:
        room = room.copy()
        room[3:] = False
    return np.flatnonzero(room)


def _reject(env: MultiClusterEnv) -> int:
    return env.cfg.clusters + EXTRA_ROWS - 1


def cpu_greedy(env: MultiClusterEnv, first_three: bool = False) -> int:
    c = _candidates(env, first_three)
    return int(c[np.argmin(env.alloc_cpu[c] / env.cap_cpu[c])]) if len(c) else _reject(env)


def binpack_greedy(env: MultiClusterEnv, first_three: bool = False) -> int:
    c = _candidates(env, first_three)
    return int(c[np.argmax(env.alloc_cpu[c] / env.cap_cpu[c])]) if len(c) else _reject(env)


def karmada_greedy(env: MultiClusterEnv, first_three: bool = False) -> int:
    c, req = _candidates(env, first_three), env.request
    if not len(c):
        return _reject(env)
    available = ((env.cap_cpu[c] - env.alloc_cpu[c]) / req.cpu + (env.cap_mem[c] - env.alloc_mem[c]) / req.mem) / 2
    return int(c[np.argmax(available)])


def hf_latency_greedy(env: MultiClusterEnv, first_three: bool = False) -> int:
    c = _candidates(env, first_three)
    c = c[env.delta[c] <= env.request.threshold]
    return int(env.rng.choice(c)) if len(c) else _reject(env)


def _spread_when_full(kind: str) -> Callable[..., int]:
    def choose(env: MultiClusterEnv, first_three: bool = False) -> int:
        if len(_candidates(env, first_three)):
            return binpack_greedy(env, first_three)
        return env.cfg.clusters + SPREADS.index(kind)
    return choose


BASELINES: dict[str, Callable[..., int]] = {"cpu-greedy": cpu_greedy, "binpack-greedy": binpack_greedy,
                                            "hf-latency-greedy": hf_latency_greedy, "karmada-greedy": karmada_greedy}
SPREAD_HEURISTICS: dict[str, Callable[..., int]] = {"spread-ffd": _spread_when_full("ffd"),
                                                    "spread-bf1b1": _spread_when_full("bf1b1")}
