"""A ClusterView as CEEnv's arrays, for the policies that work on REACH's simulator state
(the learned reschedulers, the exhaustive optimum).

Pods sit in fixed slots, ``max_replicas`` per service in service order, in the view's order;
pods of a service beyond ``max_replicas`` are invisible to such a policy (the HPA's maximum keeps
within it). The simulator's Dynamics is built once per latency model and slot count.
"""

from __future__ import annotations

import weakref

import numpy as np

from harness.policies.contract import ClusterView
from harness.sim.ceenv import Batch, Dynamics, EnvConfig

_DYNAMICS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def dynamics(view: ClusterView, max_replicas: int, load: dict | None = None) -> Dynamics:
    per_model = _DYNAMICS.setdefault(view.model, {})
    key = (max_replicas, tuple(sorted((load or {}).items())))
    if key not in per_model:
        per_model[key] = Dynamics(view.model, EnvConfig(max_replicas=max_replicas, **(load or {})))
    return per_model[key]


def to_ceenv(view: ClusterView, max_replicas: int = 5, load: dict | None = None) -> tuple[Dynamics, Batch, dict[int, str]]:
    """(Dynamics, a Batch of one, slot -> pod name). The latency is the model's for the visible pods
    (NaN while a service has none). ``load``: EnvConfig's load fields of a model trained under load
    (load, load_kind, load_knee); the view's rate or users are then the environment's load, and
    the latency the queueing model's under it. Unknown, a rate is 0 and users are 1: no waiting."""
    dyn = dynamics(view, max_replicas, load)
    st = dyn.new_batch(1)
    if dyn.cfg.loaded:
        st.load[0] = (view.users or 1) if dyn.cfg.load_kind == "closed" else (view.rate or 0.0)
    st.up[0] = view.up
    names: dict[int, str] = {}
    filled = np.zeros(dyn.S, int)
    for pod in view.pods:
        s = dyn.model.index.get(pod.service)
        if s is None or filled[s] >= max_replicas:
            continue
        slot = s * max_replicas + filled[s]
        filled[s] += 1
        st.node[0, slot] = view.index(pod.node)
        names[slot] = pod.name
    st.bg_cpu[0] = view.background_cpu
    st.bg_mem[0] = view.background_memory_mib
    if len(names) == len(view.pods) and not dyn.cfg.loaded:  # every pod visible, no load: the view's own (cached) latency
        latency = view.latency_ms()
        st.latency = np.array([np.nan if latency is None else latency])
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            st.latency = dyn.latency(st)
    return dyn, st, names
