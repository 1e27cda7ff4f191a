"""harness generate: the three files, that harness validate accepts and harness evaluate plays;
a bad argument is one line and exit 2."""

from __future__ import annotations

import json

import pytest

from harness.cli.main import main


def test_generated_files_validate_and_play(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["generate", "inventory", "--nodes", "40", "--seed", "2", "--name", "tiny"]) == 0
    assert main(["generate", "app", "--services", "12", "--pods", "30", "--inventory", "inventories/tiny.yaml"]) == 0
    capsys.readouterr()
    assert main(["generate", "load", "--app", "workloads/generated.json", "--mean-rate", "2", "--duration-s", "120",
                 "--step-s", "30", "--name", "short", "--json"]) == 0
    written = json.loads(capsys.readouterr().out)
    assert written["file"] == "scenarios/short.yaml" and written["summary"]["steps"] == 4
    for f in ("inventories/tiny.yaml", "workloads/generated.json", "profiles/generated.tiny.json", "scenarios/short.yaml"):
        assert main(["validate", f]) == 0, f
    capsys.readouterr()
    assert main(["evaluate", "scenarios/short.yaml", "--inventory", "inventories/tiny.yaml", "--policy",
                 "default,kubedsm", "--seeds", "1", "--json", "--out", "results"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["policy"] for r in rows] == ["default", "kubedsm"]
    assert all(r["requests"] > 100 and r["errors"] == 0 for r in rows)


def test_the_json_summary_says_what_was_written(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["generate", "app", "--services", "20", "--seed", "1", "--out", "a.json", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["file"] == "a.json" and out["kind"] == "app" and out["summary"]["services"] == 20


@pytest.mark.parametrize("args,field", [
    (["inventory", "--nodes", "2"], "--nodes"),
    (["app", "--services", "10", "--pods", "4"], "--pods"),
    (["load", "--app", "a.json", "--mean-rate", "0"], "--mean-rate"),
    (["inventory", "--nodes", "10", "--name", "a b"], "--name"),
])
def test_a_bad_argument_is_one_line_naming_it(tmp_path, monkeypatch, capsys, args, field):
    monkeypatch.chdir(tmp_path)
    assert main(["generate", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and field in err and err.startswith("harness: error:")
    assert not list(tmp_path.iterdir())  # nothing written
