"""HephaestusForge's claims measured live, for the first time: the admission scenario on the
four-site local testbed (``inventories/hephaestus-local.yaml``, Table 4's cluster types), the
DS-PPO model trained in that inventory's sites world against the greedy baselines.

    harness provision --inventory inventories/hephaestus-local.yaml
    harness run admission --policy ds-ppo,karmada-greedy,binpack-greedy,default --seeds 3
    harness evaluate admission -i inventories/hephaestus-local.yaml --policy ds-ppo,karmada-greedy,binpack-greedy,default --seeds 10
    .venv/bin/python -m studies.hephaestus.live results/<utc>-admission [results/<utc>-admission-sim] [--episodes 200]

Per policy, three views of the same comparison: the paper's model (the sites world of
``harness.families.hephaestus.world``: δ_c, the mean RTT between sites, as the latency; test episodes of
the model's training world), harness's simulator of the scenario (``harness evaluate``: requests'
latency from the profile and RTTs through the placement), and the testbed (``harness run``:
every user request measured). Latency in ms, rejection %, cost per replica, Gini of replicas over
sites; mean ± 95 % interval over seeds, live and simulated. Then whether the paper's
ranking holds: Spearman's ρ between the latency ranks the paper's model and the testbed give, and
DS-PPO's place in each.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from harness.families.hephaestus.ds_ppo import act, load_actor, training_world
from harness.families.hephaestus.baselines import BASELINES, SPREAD_HEURISTICS
from harness.results.stats import mean_ci95, spearman
from studies.hephaestus.agents import TEST_SEED, test

MODEL = "models/ds-ppo-hephaestus-local.pt"
MEASURES = (("mean_ms", "latency ms", 1.0), ("request_rejection_rate", "rejection %", 100.0),
            ("replica_cost", "cost/replica", 1.0), ("gini_sites", "Gini of sites", 1.0))


def summaries(folder: Path) -> dict[str, list[dict]]:
    """Each policy's run summaries in a session folder (``harness run`` or ``harness evaluate``)."""
    out: dict[str, list[dict]] = {}
    for f in sorted(folder.glob("*/summary.json")):
        s = json.loads(f.read_text())
        out.setdefault(s["policy"], []).append(s)
    if not out:
        raise SystemExit(f"{folder}: no run summaries (*/summary.json)")
    return out


def measure(s: dict, key: str) -> float | None:
    v = s.get(key, (s.get("metrics") or {}).get(key))
    return float(v) if isinstance(v, (int, float)) else None


def ci(values: list[float], scale: float = 1.0) -> str:
    values = [scale * v for v in values if v is not None]
    if not values:
        return "-"
    m, h = mean_ci95(values)
    return f"{m:.3f}" + (f" ± {h:.3f}" if h is not None else "") if abs(m) < 10 else \
        f"{m:.1f}" + (f" ± {h:.1f}" if h is not None else "")


def modelled(episodes: int) -> dict[str, np.ndarray]:
    """(rejection %, cost, latency ms, Gini) per policy in the model's own sites world."""
    net, meta = load_actor(MODEL)
    cfg = training_world(meta)
    rows = {name: test(lambda e, f=f: f(e), cfg, episodes, TEST_SEED) for name, f in {**BASELINES, **SPREAD_HEURISTICS}.items()}
    rows["ds-ppo"] = test(lambda e: act(net, e), cfg, episodes, TEST_SEED)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("live", type=Path, help="the folder 'harness run admission' wrote")
    ap.add_argument("sim", type=Path, nargs="?", help="the folder 'harness evaluate admission' wrote")
    ap.add_argument("--episodes", type=int, default=200, help="test episodes in the paper's model")
    args = ap.parse_args(argv)

    live = summaries(args.live)
    sim = summaries(args.sim) if args.sim else {}
    model = modelled(args.episodes)
    print(f"The paper's model: the sites world of {MODEL}'s training, {args.episodes} test episodes (seed {TEST_SEED})")
    print(f"{'policy':18s} {'latency ms':>10s} {'rejection %':>11s} {'cost':>8s} {'Gini':>6s}")
    for name, (rej, cost, lat, g) in model.items():
        print(f"{name:18s} {lat:10.1f} {rej:11.3f} {cost:8.2f} {g:6.3f}")
    for title, runs in (("harness's simulator of the scenario (per seed)", sim),
                        (f"live, {args.live} (per seed)", live)):
        if not runs:
            continue
        print(f"\n{title}")
        print(f"{'policy':18s} {'n':>2s} " + " ".join(f"{label:>18s}" for _, label, _ in MEASURES))
        for name, rows in runs.items():
            cells = [ci([measure(s, key) for s in rows], scale) for key, _, scale in MEASURES]
            print(f"{name:18s} {len(rows):2d} " + " ".join(f"{c:>18s}" for c in cells))
    both = [p for p in live if p in model]
    if len(both) >= 2:
        lat_model = [model[p][2] for p in both]
        lat_live = [np.mean([measure(s, "mean_ms") for s in live[p]]) for p in both]
        rank = lambda xs: {p: 1 + int(r) for p, r in zip(both, np.argsort(np.argsort(xs)))}  # noqa: E731
        print(f"\nlatency ranks ({', '.join(both)}): the paper's model {list(rank(lat_model).values())}, "
              f"live {list(rank(lat_live).values())}; Spearman's ρ = {spearman(lat_model, lat_live):.2f}")
        if "ds-ppo" in both:
            print(f"DS-PPO ranks {rank(lat_model)['ds-ppo']} of {len(both)} in the paper's model and "
                  f"{rank(lat_live)['ds-ppo']} live")
    return 0


if __name__ == "__main__":
    sys.exit(main())
