"""What a learned policy's model was trained on, and whether it meets the testbed it acts on.

Every model ``harness train`` saves records its provenance (``meta["provenance"]``): the app, the
profile (its path, the SHA-256 of its content and its mean execution times), the testbed, the
recipe, the seed, harness's version and commit. A run or an evaluation that acts with a model on
another profile says so in one line (``mismatch``): which profile the model knows, which one
runs, how far apart they put the predicted latency of a reference placement (one replica of every
service on every node), and the command that trains a model of the profile in use.
``model=auto`` asks for that model: trained once with the policy's fast recipe (``auto_model``),
kept by the profile's hash under ``<model dir>/auto/``, and reused after; ``model=auto:RECIPE``
the same with another of the policy's recipes (``rsdql[model=auto:paper]``)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from harness import __version__, shipped
from harness.spec.profile import Profile

AUTO = "auto"


def digest(profile: Profile) -> str:
    """SHA-256 of a profile's content (not its file: a copy elsewhere is the same profile)."""
    return hashlib.sha256(profile.model_dump_json().encode()).hexdigest()


def record(app: str, profile_file: str | Path, profile: Profile, testbed: str, recipe: str | None,
           seed: int | None) -> dict:
    """The provenance a model's metadata keeps."""
    return {"app": app, "profile": {"path": str(profile_file), "sha256": digest(profile),
                                    "content": json.loads(profile.model_dump_json())},
            "testbed": testbed, "recipe": recipe, "seed": seed, "harness_version": __version__,
            "harness_commit": shipped.commit()}


def trained_on(meta: dict) -> tuple[str | None, Profile | None]:
    """(the path, the profile) a model was trained on: its provenance, or for a model from before
    provenance its ``profile`` path where that file is still there."""
    prov = meta.get("provenance") or {}
    if prov.get("profile", {}).get("content") is not None:
        return prov["profile"]["path"], Profile.model_validate(prov["profile"]["content"])
    path = meta.get("profile")
    if path and (found := shipped.find(path)).exists():
        from harness.spec.profile import load_profile

        return path, load_profile(found)
    return path, None


def reference_latency(app, profile: Profile, state=None) -> float:
    """The predicted mean latency (ms) of one replica of every service on every node."""
    import numpy as np

    from harness.sim.topology import model_for

    model = model_for(app, profile, state)
    return float(model.latency(np.ones((len(model.services), len(model.topo.nodes))))[0])


def mismatch(policy: str, model: str | Path, meta: dict, app, app_file: str | Path, profile_file: str | Path,
             profile: Profile, recipe: str | None = None, state=None) -> str | None:
    """One line when ``model`` was trained on another profile than the one in use; else None."""
    known_path, known = trained_on(meta)
    if known is not None and digest(known) == digest(profile):
        return None
    how = f"harness train --policy {policy} --app {app_file} --profile {profile_file}" \
          + (f" --recipe {recipe}" if recipe else "") + f" (or --policy {policy}[model=auto])"
    if known is None:
        return (f"{policy}'s model {model} does not say which profile it was trained on ({known_path or 'none'}); "
                f"this one runs on {profile_file}; a model of it: {how}")
    try:
        was, now = reference_latency(app, known, state), reference_latency(app, profile, state)
        by = f"the reference placement's predicted latency {was:.1f} -> {now:.1f} ms ({100 * (now / was - 1):+.0f} %)"
    except Exception:  # noqa: BLE001 — a profile of other node types: the comparison cannot be made
        by = "their node types differ"
    return f"{policy}'s model {model} was trained on {known_path}, this runs on {profile_file}: {by}; a model of it: {how}"
