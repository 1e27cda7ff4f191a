"""Simulator and policy speed: CEEnv steps/s (scalar Gymnasium env and the batched one, random
valid actions), the latency model's placements/s, and a trained policy's decision time (p50,
p99 per decision; target p99 under 1 ms). Reference in the same run: a bare numpy step.

    .venv/bin/python -m benchmarks.sim_speed [--model models/reach-chain.pt] [--seconds 3]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from harness.sim.ceenv import CEEnv, CEEnvVector, Dynamics, EnvConfig, default_model


def rate(fn, seconds: float) -> float:
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        n += fn()
    return n / (time.perf_counter() - t0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", help="a trained reach/rsdql model to time")
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--batch", type=int, default=64)
    args = ap.parse_args()
    model = default_model(None, None)
    dyn = Dynamics(model, EnvConfig())
    rng = np.random.default_rng(0)

    env = CEEnv(model)
    env.reset(seed=0)

    def scalar_step() -> int:
        _, _, term, trunc, info = env.step(rng.choice(np.flatnonzero(info_mask[0])))
        if term or trunc:
            env.reset()
        info_mask[0] = env.action_masks()
        return 1
    info_mask = [env.action_masks()]
    single = rate(scalar_step, args.seconds)

    batch = CEEnvVector(args.batch, dyn=dyn)
    info = batch.reset(seed=0)[1]

    def batch_step() -> int:
        nonlocal info
        mask = info["action_mask"]
        acts = (rng.random(mask.shape) * mask).argmax(1)  # a random valid action per env
        info = batch.step(acts)[4]
        return args.batch
    batched = rate(batch_step, args.seconds)

    X = np.stack([dyn.counts(batch.st.node)] * 16).reshape(-1, dyn.S, dyn.N)
    placements = rate(lambda: (model.latency(X), len(X))[1], args.seconds)
    ref = rate(lambda: (np.einsum("bn,nm,bm->b", X[:, 0], model.D, X[:, 1]), 1)[1], args.seconds)

    print(f"CEEnv scalar (Gymnasium)    {single:10.0f} steps/s")
    print(f"CEEnv batched x{args.batch:<3d}         {batched:10.0f} steps/s  ({batched / single:.1f}x scalar)")
    print(f"latency model               {placements:10.0f} placements/s (batches of {len(X)})")
    print(f"reference: one einsum        {ref:10.0f} calls/s")
    if args.model:
        from harness.policies import build_from_model
        from harness.rescheduler.evaluate import SimWorld

        pol = build_from_model(args.model)  # the policy the model's metadata names
        name = pol.name
        st = dyn.new_batch(1)
        dyn.reset_one(st, 0, rng)
        st.latency = dyn.latency(st)
        world = SimWorld(dyn, st)

        def arrays_only():  # the reference: the same network on CEEnv's arrays, no ClusterView
            import torch

            with torch.no_grad():
                pol.score(pol.net, torch.as_tensor(dyn.observe(st)))[0, torch.as_tensor(dyn.masks(st))[0]].argmax()

        def quantiles(fn) -> tuple[float, float]:
            times = []
            for _ in range(2000):
                t = time.perf_counter()
                fn()
                times.append((time.perf_counter() - t) * 1000)
            times.sort()
            return times[len(times) // 2], times[int(len(times) * 0.99)]
        p50, p99 = quantiles(lambda: pol.plan(world.view()))
        r50, _ = quantiles(arrays_only)
        print(f"{name} decision (ClusterView + CEEnv arrays + network): p50 {p50:.3f} ms, p99 {p99:.3f} ms "
              f"(target p99 < 1 ms); {p50 / r50:.2f}x the network on CEEnv's arrays alone (p50 {r50:.3f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
