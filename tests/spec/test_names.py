"""Names that escape (issue 65, item 6): every name that becomes a file name, a label or a YAML
value is checked once where its file is parsed — one line naming the file, the field and what a
name is — so a scenario cannot make ``evaluate`` write outside ``--out``, nor an app make the
profile writer write outside its folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from harness.cli.main import main
from harness.errors import UserError
from harness.spec.app import load_app
from harness.spec.inventory import load_inventory
from harness.spec.names import as_name, check_name, label_value
from harness.spec.profile import Profile, load_profile
from tests.conftest import REPO

HOSTILE = ["../../../x", "../x", "..", ".", "a/b", "x\n  namespace: kube-system", "evil\n    hostNetwork: true",
           "-x", "x-", "", "a b", "x" * 64, "é"]


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_name_is_refused(name):
    with pytest.raises(ValueError, match="expected letters, digits"):
        check_name(name)


@pytest.mark.parametrize("name", ["chain", "Chain_2", "kubedsm", "a.b-c", "x" * 63])
def test_names_as_they_are_pass(name):
    assert check_name(name) == name


def test_apps_deployed_together_are_names_joined_with_plus():
    assert check_name("app0+app1", joined=True) == "app0+app1"
    with pytest.raises(ValueError):
        check_name("app0+../x", joined=True)
    assert label_value("app0+app1") == "app0.app1"


def test_a_scenario_named_to_escape_is_one_line_and_evaluate_writes_nothing_outside_out(tmp_path, capsys):
    scenario = tmp_path / "s.yaml"
    scenario.write_text(yaml.safe_dump({"name": "../../../x", "description": "escape", "duration_s": 10,
                                        "app": "chain"}))
    out = tmp_path / "a" / "b" / "c" / "out"
    out.parent.mkdir(parents=True)
    before = set(tmp_path.rglob("*"))
    assert main(["evaluate", str(scenario), "--policy", "default", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"harness: error: {scenario}: name: expected letters, digits, '-', '_' or '.', beginning and "
                   "ending with a letter or digit, at most 63 characters (a Kubernetes label value; it becomes a "
                   "file name), got '../../../x'"]
    assert {p for p in set(tmp_path.rglob("*")) - before if not p.is_relative_to(out)} == set()


def _app_file(tmp_path: Path, name: str) -> Path:
    doc = json.loads((REPO / "workloads" / "chain.json").read_text())
    doc = dict(doc) if "services" in doc else {"services": doc}
    doc["name"] = name
    path = tmp_path / "app.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("name", ["../../x", "x\n  namespace: kube-system", "evil\n    hostNetwork: true"])
def test_an_app_name_that_escapes_is_one_line(tmp_path, name):
    path = _app_file(tmp_path, name)
    with pytest.raises(UserError) as exc:
        load_app(path)
    assert (exc.value.source, exc.value.field) == (str(path), "name") and "\n" not in str(exc.value).replace(
        repr(name), "")


def test_an_apps_name_taken_from_its_file_is_made_a_name(tmp_path):
    doc = json.loads((REPO / "workloads" / "chain.json").read_text())
    bare = doc["services"] if "services" in doc else doc
    path = tmp_path / "My App (v2).json"
    path.write_text(json.dumps(bare))
    assert load_app(path).name == "My-App-v2"
    assert as_name("...") == "app"


def test_the_profile_writer_cannot_write_outside_its_folder(tmp_path):
    """The profile is what ``profile`` and ``calibrate`` write as <app>.<testbed>.json: a name that
    escapes cannot be its app or its testbed, whether built in code or read from a file."""
    doc = json.loads((REPO / "profiles" / "chain.reach-local.json").read_text())
    for field in ("app", "testbed"):
        with pytest.raises(ValueError, match="expected letters"):
            Profile.model_validate(doc | {field: "../../x"})
        path = tmp_path / f"bad-{field}.json"
        path.write_text(json.dumps(doc | {field: "../../x"}))
        with pytest.raises(UserError) as exc:
            load_profile(path)
        assert exc.value.field == field


def test_an_inventory_named_to_escape_is_one_line(tmp_path):
    doc = yaml.safe_load((REPO / "harness" / "data" / "inventories" / "reach-local.yaml").read_text())
    path = tmp_path / "inv.yaml"
    path.write_text(yaml.safe_dump(doc | {"name": "../x"}))
    with pytest.raises(UserError) as exc:
        load_inventory(path)
    assert (exc.value.source, exc.value.field) == (str(path), "name")
