"""A lean repository: a model is committed only where a published number rests on it, within a
stated budget; never a training's state, a scratch result or a checkpoint."""

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODEL_BUDGET_BYTES = 16_000_000  # every committed model file (.pt) together; docs/architecture.md states it
NEVER = (".ckpt", ".part", ".lock", ".pkl", ".npz")


def tracked() -> list[Path]:
    out = subprocess.run(["git", "-C", str(ROOT), "ls-files"], capture_output=True, text=True, check=True).stdout
    return [ROOT / line for line in out.splitlines()]


def test_no_training_state_or_scratch_is_committed():
    bad = [p.relative_to(ROOT) for p in tracked() if p.suffix in NEVER or p.relative_to(ROOT).parts[0] == "results"]
    assert not bad, bad


def test_the_models_stay_within_their_budget():
    models = [p for p in tracked() if p.suffix == ".pt" and p.exists()]
    total = sum(p.stat().st_size for p in models)
    assert total <= MODEL_BUDGET_BYTES, f"{total:,} bytes of models (budget {MODEL_BUDGET_BYTES:,})"
    assert f"{MODEL_BUDGET_BYTES // 1_000_000} MB" in (ROOT / "docs" / "architecture.md").read_text()


def test_every_committed_model_has_its_metadata():
    for p in (p for p in tracked() if p.suffix == ".pt"):
        assert p.with_suffix(".json").exists(), p
