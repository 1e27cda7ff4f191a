"""One vocabulary across commands: the app is ``--app FILE``, policies ``--policy a,b``, seeds
``--seeds N --seed S`` and a run is ``<policy>-s<seed>`` wherever it is named; the old forms stay
accepted, hidden, for old scripts; REACH's Fig. 8 sweep is ``harness sweep``."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest

from harness.errors import UserError
from harness.seeds import run_folder, run_label, seed_list
from tests.conftest import REPO


def harness(*args: str, cwd=REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def options_table() -> dict[str, tuple[str, str]]:
    """scripts/cli_options.py's table: command -> (positional arguments, visible options)."""
    r = subprocess.run([sys.executable, "scripts/cli_options.py"], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    rows = [line.strip("|").split(" | ") for line in r.stdout.splitlines()[2:]]
    return {name.strip(" `"): (args.strip(), opts.strip()) for name, args, opts in rows}


def test_every_command_speaks_one_vocabulary():
    table = options_table()
    assert {"harness evaluate", "harness sweep", "harness run", "harness deploy"} <= set(table)
    for command, (args, opts) in table.items():
        assert "`--policies`" not in opts and "`--repeat`" not in opts, command  # old names: hidden
        assert "APP_FILE" not in args, command  # the app is --app
    for command in ("deploy", "profile", "calibrate", "predict", "train", "evaluate", "sweep", "run"):
        assert "`--app`" in table[f"harness {command}"][1], command
    for command in ("evaluate", "sweep", "run", "leaderboard"):
        assert "`--seeds`" in table[f"harness {command}"][1] and "`--seed`" in table[f"harness {command}"][1], command
    assert table["harness validate"][0] == "FILE"  # validates any kind of file
    assert "`--rounds`" in table["harness calibrate"][1]
    assert "`--pods`" not in table["harness evaluate"][1] and "`--pods`" in table["harness sweep"][1]


def test_the_seeds_and_a_runs_one_name():
    assert seed_list(3) == [0, 1, 2] and seed_list(2, 5) == [5, 6]
    assert run_folder("reach", 4) == "reach-s4" and run_label("reach", 4) == "reach s4"
    assert run_label("reach", "mean") == "reach mean"
    with pytest.raises(UserError, match="--seeds"):
        seed_list(0)
    with pytest.raises(UserError, match="--seed"):
        seed_list(2, -1)


def test_evaluate_names_each_run_by_its_seed(tmp_path):
    r = harness("evaluate", "steady", "--policy", "default,cloud-first", "--seeds", "2", "--seed", "5", "--json",
                "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)
    (session,) = tmp_path.iterdir()
    assert sorted(p.name for p in session.iterdir() if p.is_dir()) == [
        "cloud-first-s5", "cloud-first-s6", "default-s5", "default-s6"]
    assert sorted((x["policy"], x["seed"]) for x in rows) == [("cloud-first", 5), ("cloud-first", 6), ("default", 5),
                                                            ("default", 6)]
    assert all("repeat" not in x for x in rows)
    comparison = list(csv.DictReader(open(session / "comparison.csv")))
    assert [(c["policy"], c["seed"]) for c in comparison] == [("default", "5"), ("cloud-first", "5"), ("default", "6"),
                                                             ("cloud-first", "6")]
    assert "repeat" not in comparison[0]
    assert "default s5:" in r.stderr  # the progress lines say the seed the same way


def test_evaluate_without_a_scenario_points_to_the_sweep_in_one_line():
    for args in ([], ["--app", "workloads/chain.json", "--profile", "profiles/chain.reach-local.json", "--pods", "12",
                      "--policies", "default"]):
        r = harness("evaluate", *args)
        assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
        assert "harness sweep" in r.stderr and r.stdout == ""


def test_sweep_plays_reachs_fig_8_and_writes_what_report_reads(tmp_path):
    out = tmp_path / "sweep.csv"
    r = harness("sweep", "--app", "workloads/chain.json", "--profile", "profiles/chain.reach-local.json", "--pods",
                "4,8", "--policy", "default,cloud-first", "--seeds", "2", "--gap-time-limit", "0", "--out", str(out), "--json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)  # nothing but JSON on stdout: the table went to stderr
    assert [(x["policy"], x["pods"], x["scenarios"]) for x in rows] == [
        ("default", 4, 2), ("cloud-first", 4, 2), ("default", 8, 2), ("cloud-first", 8, 2)]
    assert all(x["latency_ms"] > 0 and x["gap"] is None for x in rows)
    assert "cloud-first" in r.stderr
    assert [x["latency_ms"] for x in rows] == [float(c["latency_ms"]) for c in csv.DictReader(open(out))]
    rep = harness("report", str(out), "--json")
    assert rep.returncode == 0 and json.loads(rep.stdout)["evaluations"] == 1, rep.stderr


def test_the_sweep_refuses_a_bad_input_in_one_line():
    for args, field in ((["--profile", "profiles/chain.reach-local.json"], "--app"),
                        (["--app", "workloads/chain.json", "--profile", "profiles/chain.reach-local.json", "--pods",
                          "4,x"], "--pods"),
                        (["--app", "workloads/chain.json", "--profile", "profiles/chain.reach-local.json", "--pods",
                          "6"], "--pods")):
        r = harness("sweep", *args)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and f": {field}: " in r.stderr, r.stderr


def test_the_old_names_still_parse_and_both_at_once_is_one_line(tmp_path, monkeypatch, capsys):
    """deploy, profile and calibrate take --app (the positional of old scripts still works); run's
    --repeat is --seeds, calibrate's is --rounds, evaluate's --policies is --policy. Without a
    testbed each gets as far as opening it: the options were understood."""
    from harness.cli.main import main

    monkeypatch.chdir(tmp_path)
    app = str(REPO / "workloads/chain.json")
    state = ["--state-dir", str(tmp_path / ".harness")]
    understood = [["deploy", "--app", app], ["deploy", app], ["profile", "--app", app], ["profile", app],
                  ["calibrate", "--app", app, "--rounds", "2"], ["calibrate", app, "--repeat", "2"],
                  ["run", "steady", "--repeat", "2"], ["run", "steady", "--seeds", "2", "--seed", "3"]]
    for args in understood:
        assert main(state + args) == 2, args
        assert "no testbed is provisioned here" in capsys.readouterr().err, args
    refused = {("deploy", app, "--app", app): "--app", ("profile",): "--app",
               ("calibrate", "--app", app, "--rounds", "2", "--repeat", "2"): "--repeat",
               ("run", "steady", "--seeds", "2", "--repeat", "2"): "--repeat"}
    for args, field in refused.items():
        assert main(state + list(args)) == 2, args
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"error: {field}: " in err, (args, err)
    assert main(["evaluate", "steady", "--policy", "default", "--policies", "default"]) == 2
    assert "error: --policies: given twice" in capsys.readouterr().err


def test_evaluates_old_policies_flag_still_works(tmp_path):
    r = harness("evaluate", "steady", "--policies", "default", "--seeds", "1", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert [p.name for p in next(tmp_path.iterdir()).iterdir() if p.is_dir()] == ["default-s0"]


def test_a_run_folder_is_one_safe_path_part():
    """A policy's arguments may hold a path or worse; its run's folder is one part of the session's."""
    from harness.seeds import run_folder

    assert run_folder("reach", 2) == "reach-s2"
    for label in ("rsdql[model=models/rsdql-chain.pt]", "../../x", "a/../../b", "x\\y"):
        name = run_folder(label, 0)
        assert "/" not in name and "\\" not in name and ".." not in name and name.endswith("-s0")
