"""Saving and loading trained networks with their metadata: shared by every learned policy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from harness.sim.ceenv import Dynamics


def save_model(net, meta: dict, path: Path) -> None:
    import torch

    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"state_dict": net.state_dict(), "meta": meta}, path)
    path.with_suffix(".json").write_text(json.dumps(meta, indent=1))


def load_model(path: str | Path, make: Callable[[dict], object]):
    """(network with weights, metadata); ``make(meta)`` builds the empty network."""
    import torch

    from harness.errors import UserError

    try:
        blob = torch.load(path, weights_only=True)  # data only: a model file may come from anywhere
    except FileNotFoundError:
        raise UserError("model not found; train it with 'harness train'", source=str(path)) from None
    except Exception as exc:  # noqa: BLE001 — corrupt, truncated or holding code: one line
        raise UserError(f"not a model file harness can read ({str(exc).strip().splitlines()[0][:160] if str(exc).strip() else type(exc).__name__})",
                        source=str(path)) from None
    net = make(blob["meta"])
    net.load_state_dict(blob["state_dict"])
    net.eval()
    return net, blob["meta"]


def metadata(policy: str, env_version: str, dyn: Dynamics, args: dict, app: str, profile: str, testbed: str,
             curve: list) -> dict:
    return {"policy": policy, "env_version": env_version, "app": app, "profile": profile, "testbed": testbed,
            "nodes": list(dyn.model.topo.nodes), "max_replicas": dyn.cfg.max_replicas, "env_config": vars(dyn.cfg), "obs_dim": dyn.obs_dim,
            "n_actions": dyn.n_actions, "args": args, "seed": args.get("seed"),
            "final_mean_return": curve[-1][1] if curve else None, "train_seconds": curve[-1][2] if curve else None}
