"""HephaestusForge's world: harness's batched env (``harness.families.hephaestus.world_vector``) and its
scalar env against the authors' env (``gym-multi-k8s/envs/karmada_scheduling_env.py`` of a clone
of jpedro1992/HephaestusForge), stepped in the same process, in turns (this machine's speed
swings 2x within minutes: only same-run ratios count). Target (issue 40): the batched env >= 50x
the authors' steps/s.

Each env plays its default world (4 clusters, the code's arrival rate, 100-step episodes) with
the first allowed action (deploy-all where a cluster has room, else FFD): the time of observing
(observation and masks, as a training loop needs them) and stepping counts. The authors' env
imports the old ``gym``, which is not installed here; the benchmark aliases ``gym`` to Gymnasium,
whose ``spaces`` and ``utils.seeding`` their env uses the same way. Their env writes one CSV row
per episode (into a temporary folder here), as it always does.

    .venv/bin/python -m benchmarks.multicluster_speed HephaestusForge [--seconds 3] [--batch 256] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from harness.families.hephaestus.world import MultiClusterConfig, MultiClusterEnv
from harness.families.hephaestus.world_vector import MultiClusterVector


def authors_env(clone: Path):
    """A factory of the authors' env, with ``gym`` aliased to Gymnasium when it is missing."""
    try:
        import gym  # noqa: F401
    except ImportError:
        import gymnasium
        import gymnasium.spaces
        import gymnasium.utils.seeding

        sys.modules.update({"gym": gymnasium, "gym.spaces": gymnasium.spaces, "gym.utils": gymnasium.utils,
                            "gym.utils.seeding": gymnasium.utils.seeding})
    import logging

    sys.path.insert(0, str(clone / "gym-multi-k8s"))
    from envs.karmada_scheduling_env import KarmadaSchedulingEnv

    logging.disable(logging.INFO)  # their env logs every step at INFO
    return lambda: KarmadaSchedulingEnv(file_results_name=str(Path(tempfile.mkdtemp()) / "karmada"))


def steps_per_s(make_step, seconds: float) -> float:
    step = make_step()
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        n += step()
    return n / (time.perf_counter() - t0)


def authors(make):
    env = make()
    env.reset()

    def step() -> int:
        _, _, done, _ = env.step(int(np.argmax(env.action_masks())))
        if done:
            env.reset()
        return 1
    return step


def scalar():
    env = MultiClusterEnv(MultiClusterConfig(hf_compat=True), seed=0)
    env.reset()

    def step() -> int:
        env.observation()
        _, _, done, _ = env.step(int(np.argmax(env.action_masks())))
        if done:
            env.reset()
        return 1
    return step


def batched(n: int):
    vec = MultiClusterVector(MultiClusterConfig(hf_compat=True), n, seed=0)
    vec.reset()

    def step() -> int:
        vec.observation()
        vec.step(np.argmax(vec.action_masks(), axis=1))
        return n
    return step


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("clone", type=Path, help="a clone of jpedro1992/HephaestusForge")
    ap.add_argument("--seconds", type=float, default=3.0, help="per measurement")
    ap.add_argument("--batch", type=int, default=256, help="environments of the batched env")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of the three measurements, in turns")
    args = ap.parse_args(argv)
    if not (args.clone / "gym-multi-k8s/envs/karmada_scheduling_env.py").is_file():
        print(f"{args.clone}: not a clone of jpedro1992/HephaestusForge (no gym-multi-k8s/envs/karmada_scheduling_env.py)",
              file=sys.stderr)
        return 2
    cwd = os.getcwd()
    make = authors_env(args.clone.resolve())
    os.chdir(cwd)
    rows = []
    for r in range(args.rounds):
        a = steps_per_s(lambda: authors(make), args.seconds)
        s = steps_per_s(scalar, args.seconds)
        b = steps_per_s(lambda: batched(args.batch), args.seconds)
        rows.append((a, s, b))
        print(f"round {r + 1}: authors' env {a:,.0f} steps/s, harness scalar {s:,.0f} ({s / a:.1f}x), "
              f"batched x{args.batch} {b:,.0f} ({b / a:.1f}x)")
    ratio = float(np.median([b / a for a, _, b in rows]))
    print(f"median ratio, batched / authors': {ratio:.1f}x (target >= 50x): {'PASS' if ratio >= 50 else 'FAIL'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
