"""``--json``: what a script or a pipe reads, parsed here for each command that has it (the live
``run`` shares evaluate's rows: the summaries of docs/run-directory.md)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import REPO


def harness(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=300)


def test_scenarios_json_lists_every_built_in_scenario():
    r = harness("scenarios", "--json")
    assert r.returncode == 0, r.stderr
    got = {s["name"]: s for s in json.loads(r.stdout)}
    assert {"steady", "node-failure", "cpu-hog", "replica-cycles"} <= set(got)
    assert got["steady"]["duration_s"] > 0 and got["steady"]["file"].endswith("steady.yaml")


def test_evaluate_json_is_the_runs_summaries(tmp_path):
    r = harness("evaluate", "steady", "--policy", "default,cloud-first", "--seeds", "2", "--json", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)  # nothing but JSON on stdout: progress went to stderr
    assert len(rows) == 4 and {x["policy"] for x in rows} == {"default", "cloud-first"}
    for x in rows:  # each the run's own summary.json, with where it is
        on_disk = json.loads((REPO / x["run_dir"] / "summary.json").read_text())
        assert {k: v for k, v in x.items() if k != "run_dir"} == {k: v for k, v in on_disk.items() if k != "run_dir"}


def test_leaderboard_json_holds_the_ranked_rows_and_the_coverage(tmp_path):
    import yaml

    f = tmp_path / "board.yaml"
    f.write_text(yaml.safe_dump({"version": 1, "name": "j", "tracks": [
        {"name": "t", "apps": ["chain"], "scenarios": ["steady"], "policies": ["default", "cloud-first"]}]}))
    r = harness("leaderboard", str(f), "--seeds", "1", "--jobs", "1", "--json", "--out", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert {x["policy"] for x in got["ranked"]} == {"default", "cloud-first"} and got["failed_cells"] == []
    assert {x["policy"] for x in got["coverage"]} == {"default", "cloud-first"}
    # numbers are numbers and a missing value null, as docs/json-output.md promises (one seed: no interval)
    row = got["ranked"][0]
    assert isinstance(row["rank"], int) and isinstance(row["mean"], float)
    assert all(v is None or not isinstance(v, str) or not v.replace(".", "", 1).lstrip("-").isdigit() for v in row.values())
    assert "" not in row.values()


def test_predict_json_is_the_models_prediction_with_its_breakdown(tmp_path):
    placement = tmp_path / "p.yaml"
    placement.write_text("front-end: [edge-a-1]\nml: [cloud-a-1]\nback-end: [edge-b-1]\ndb: [cloud-a-2]\n")
    r = harness("predict", "--app", "workloads/chain.json", "--profile", "profiles/chain.reach-local.json",
                "--placement", str(placement), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["latency_ms"] > out["gateway_ms"] > 0


def test_report_json_names_the_page_and_every_file_it_wrote(tmp_path):
    r = harness("evaluate", "steady", "--policy", "default,cloud-first", "--seeds", "1", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    session = next(tmp_path.iterdir())
    r = harness("report", str(session), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["runs"] == 2 and out["problems"] == [] and out["page"].endswith("report.html")
    folder = session / "report"
    assert out["folder"] == str(folder) and "report.html" in out["files"]
    assert all((folder / f).is_file() for f in out["files"])
