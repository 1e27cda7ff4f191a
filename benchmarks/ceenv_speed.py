"""CEEnv's batched speed, compiled against the numpy implementation it replaced, in one run
(this machine's speed swings 2x between runs, so only the ratio is comparable across runs).

Two problems: REACH's Chain on its 6-node testbed, and a generated 30-node x 20-service app
(a random call tree with parallel groups, three node types). On each, B environments are stepped
with a random valid action each; the time of observing (observation and masks, as a training
loop needs them) and stepping counts, not the drawing of the actions. Also: the latency model's placements/s on the large app (the compiled model computes
X @ D once per caller; the numpy one ran an einsum per call edge), and a check that the two
implementations give the same latency. Targets (issue 20): >= 100,000 steps/s on Chain and
>= 10x the numpy implementation on the 30 x 20 app.

    .venv/bin/python -m benchmarks.ceenv_speed [--seconds 3] [--batch 64]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from benchmarks.ceenv_numpy import NumpyCEEnvVector, NumpyDynamics, numpy_terms
from harness.sim.ceenv import CEEnvVector, Dynamics, EnvConfig, default_model
from harness.sim.latency import LatencyModel, Topology
from harness.spec.app import parse_app


def large_model(services: int = 20, nodes: int = 30, seed: int = 0) -> LatencyModel:
    """A random call tree of ``services`` (each service called by an earlier one, a caller's
    callees split into groups of 1-3 called in parallel) on ``nodes`` nodes of three types:
    a fifth cloud (8 cores, 64 ms from the user), the rest two edge types (4 and 2 cores, 5 ms)."""
    rng = np.random.default_rng(seed)
    names = [f"s{i}" for i in range(services)]
    callees: dict[str, list[str]] = {n: [] for n in names}
    for i in range(1, services):
        callees[names[rng.integers(0, i)]].append(names[i])
    doc = {"name": "large", "gateway": "s0", "services": {}}
    for n in names:
        cs, groups = callees[n], []
        while cs:
            k = int(rng.integers(1, 4))
            groups.append({"seq_len": min(k, len(cs)), "services": cs[:k]})
            cs = cs[k:]
        doc["services"][n] = {"internal_service": {"compute_pi": {"range_complexity": [1, 1]}},
                              "external_services": groups, "cpu-requests": "200m", "memory-requests": "256Mi"}
    app = parse_app(doc, "large.json")
    n_cloud = nodes // 5
    types = ["cloud"] * n_cloud + ["edge-a", "edge-b"] * ((nodes - n_cloud) // 2) + ["edge-a"] * ((nodes - n_cloud) % 2)
    tier = np.array([t != "cloud" for t in types])
    rtt = np.where(tier[:, None] == tier[None, :], 2.0, 30.0) + rng.uniform(0, 3, (nodes, nodes))
    rtt = (rtt + rtt.T) / 2
    np.fill_diagonal(rtt, 0)
    topo = Topology(nodes=tuple(f"n{i}" for i in range(nodes)), node_types=tuple(types),
                    tiers=tuple("edge" if e else "cloud" for e in tier),
                    cpus=np.array([{"cloud": 8, "edge-a": 4, "edge-b": 2}[t] for t in types], float),
                    memory_mib=np.array([{"cloud": 32768, "edge-a": 8192, "edge-b": 4096}[t] for t in types], float),
                    rtt=rtt, user_rtt=np.where(tier, 5.0, 64.0))
    base = rng.uniform(5, 40, services)
    execution = {n: {"cloud": base[i], "edge-a": 1.5 * base[i], "edge-b": 2.2 * base[i]} for i, n in enumerate(names)}
    return LatencyModel(app, execution, topo)


def steps_per_second(envs, B: int, seconds: float, rng: np.random.Generator) -> float:
    """Random valid actions, one per environment, through Gymnasium's vector API (the observation
    and masks a learner reads come with each step). Only the environment's time counts, not the
    drawing of the actions."""
    info = envs.reset(seed=0)[1]
    n, spent, t0 = 0, 0.0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        mask = info["action_mask"]
        actions = (rng.random(mask.shape, dtype=np.float32) * mask).argmax(1)
        t = time.perf_counter()
        info = envs.step(actions)[4]
        spent += time.perf_counter() - t
        n += B
    return n / spent


def compare(label: str, model: LatencyModel, B: int, seconds: float) -> float:
    cfg = EnvConfig()
    rates = {}
    for name, dyn_cls, batch_cls in (("numpy", NumpyDynamics, NumpyCEEnvVector), ("compiled", Dynamics, CEEnvVector)):
        dyn = dyn_cls(model, cfg)
        batch = batch_cls(B, dyn=dyn)
        steps_per_second(batch, B, 0.2, np.random.default_rng(1))  # warm-up (the compiled code loads)
        rates[name] = steps_per_second(batch, B, seconds, np.random.default_rng(0))
    ratio = rates["compiled"] / rates["numpy"]
    print(f"{label:34s} numpy {rates['numpy']:9.0f}   compiled {rates['compiled']:9.0f} steps/s   {ratio:5.1f}x")
    return rates["compiled"], ratio


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--batch", type=int, default=64)
    args = ap.parse_args()
    chain, large = default_model(None, None), large_model()
    print(f"batched CEEnv, {args.batch} environments, random valid actions, observation and masks included")
    chain_rate, _ = compare("Chain (6 nodes x 4 services)", chain, args.batch, args.seconds)
    _, large_ratio = compare("generated (30 nodes x 20 services)", large, args.batch, args.seconds)

    dyn = Dynamics(large, EnvConfig())
    envs = CEEnvVector(1024, dyn=dyn)
    envs.reset(seed=2)
    X = dyn.counts(envs.st.node)
    same = np.allclose(numpy_terms(large, X)["D_msa"], large.latency(X), rtol=1e-12)
    rate = {}
    for name, fn in (("numpy", lambda: numpy_terms(large, X)), ("compiled", lambda: large.terms(X))):
        fn()
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < args.seconds:
            fn()
            n += len(X)
        rate[name] = n / (time.perf_counter() - t0)
    print(f"{'latency model, 30 x 20 (batch 1024)':34s} numpy {rate['numpy']:9.0f}   compiled {rate['compiled']:9.0f} "
          f"placements/s {rate['compiled'] / rate['numpy']:5.1f}x; same latency: {same}")
    checks = [(f"Chain >= 100,000 steps/s", chain_rate >= 100_000, f"{chain_rate:.0f}"),
              ("30 x 20 >= 10x the numpy implementation", large_ratio >= 10, f"{large_ratio:.1f}x"),
              ("the two implementations give the same latency", same, "")]
    for name, ok, detail in checks:
        print(f"{'PASS' if ok else 'FAIL'}  {name} {detail}")
    return 0 if all(ok for _, ok, _ in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
