"""A learned policy's model says what it was trained on; acting on another profile is said in one
line with the command that trains for it; ``model=auto`` trains that model once and reuses it."""

import json
from pathlib import Path

import pytest

from harness.families.reach.rsdql import Rsdql
from harness.policies import build_for_app
from harness.spec.profile import load_profile

APP, PROFILE, CALIBRATED = Path("workloads/chain.json"), Path("profiles/chain.reach-local.json"), \
    Path("profiles/chain.reach-local.calibrated.json")


@pytest.fixture()
def tiny(monkeypatch):
    monkeypatch.setattr(Rsdql, "recipes", {"committed": ["--total-steps", "3000", "--learning-starts", "500"]})


def test_auto_trains_a_model_of_the_profile_once_and_reuses_it(tmp_path, tiny, capsys):
    first = build_for_app("rsdql[model=auto]", "chain", APP, CALIBRATED, tmp_path)
    path = Path(first.args.model)
    assert path.parent == tmp_path / "auto" and path.exists()
    meta = json.loads(path.with_suffix(".json").read_text())
    prov = meta["provenance"]
    assert prov["profile"]["path"] == str(CALIBRATED) and prov["recipe"] == "committed" and prov["app"] == "chain"
    assert prov["profile"]["content"] == json.loads(load_profile(CALIBRATED).model_dump_json())
    assert len(prov["profile"]["sha256"]) == 64 and prov["harness_commit"]
    assert "training one" in capsys.readouterr().err
    stamp = path.stat().st_mtime_ns
    second = build_for_app("rsdql[model=auto]", "chain", APP, CALIBRATED, tmp_path)
    assert second.args.model == first.args.model and path.stat().st_mtime_ns == stamp
    assert "trained before" in capsys.readouterr().err
    # another profile, another model
    third = build_for_app("rsdql[model=auto]", "chain", APP, PROFILE, tmp_path)
    assert third.args.model != first.args.model


def test_a_model_of_another_profile_is_said_in_one_line(tmp_path, tiny):
    notes: list[str] = []
    build_for_app("rsdql[model=auto]", "chain", APP, CALIBRATED, tmp_path, notes)
    assert notes == []  # its own profile: nothing to say
    model = next((tmp_path / "auto").glob("*.pt"))
    build_for_app(f"rsdql[model={model}]", "chain", APP, PROFILE, tmp_path, notes)
    assert len(notes) == 1 and "\n" not in notes[0]
    assert str(CALIBRATED) in notes[0] and str(PROFILE) in notes[0] and "%" in notes[0]
    assert "harness train --policy rsdql" in notes[0] and "rsdql[model=auto]" in notes[0]


def test_a_committed_model_without_provenance_is_compared_by_its_profile_path():
    notes: list[str] = []
    build_for_app("reach", "chain", APP, CALIBRATED, Path("models"), notes)
    assert len(notes) == 1 and "models/reach-chain.pt was trained on profiles/chain.reach-local.json" in notes[0]
    notes.clear()
    build_for_app("reach", "chain", APP, PROFILE, Path("models"), notes)
    assert notes == []


def test_auto_with_a_recipe_trains_that_recipes_model_beside_the_default(tmp_path, monkeypatch):
    monkeypatch.setattr(Rsdql, "recipes", {"committed": ["--total-steps", "3000", "--learning-starts", "500"],
                                           "paper": ["--total-steps", "3000", "--learning-starts", "500",
                                                     "--unmasked"]})
    default = build_for_app("rsdql[model=auto]", "chain", APP, CALIBRATED, tmp_path)
    paper = build_for_app("rsdql[model=auto:paper]", "chain", APP, CALIBRATED, tmp_path)
    path = Path(paper.args.model)
    assert path != Path(default.args.model) and path.name.startswith("rsdql-chain-paper-")
    meta = json.loads(path.with_suffix(".json").read_text())
    assert meta["provenance"]["recipe"] == "paper" and meta["args"]["unmasked"] is True
    assert json.loads(Path(default.args.model).with_suffix(".json").read_text())["args"]["unmasked"] is False
    from harness.errors import UserError

    with pytest.raises(UserError, match="no recipe 'nope'; it has: committed, paper"):
        build_for_app("rsdql[model=auto:nope]", "chain", APP, CALIBRATED, tmp_path)
