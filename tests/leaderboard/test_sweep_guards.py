"""One writer per leaderboard folder, and a policy that does not exist named by its file and field
before anything is printed or made (issue 65, item 7)."""

from __future__ import annotations

import os
import subprocess
import sys

import yaml

from tests.conftest import REPO


def leaderboard(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", "leaderboard", *args], cwd=REPO, env=dict(os.environ),
                          capture_output=True, text=True, timeout=120)


def board(tmp_path, policies, scenarios=("steady",)) -> str:
    f = tmp_path / "board.yaml"
    f.write_text(yaml.safe_dump({"version": 1, "name": "t", "tracks": [
        {"name": "t", "apps": ["chain"], "scenarios": list(scenarios), "policies": policies}]}))
    return str(f)


def test_an_unknown_policy_names_the_file_and_field_before_the_banner_and_the_folder(tmp_path):
    f = board(tmp_path, ["default", "no-such-policy"])
    out = tmp_path / "out"
    r = leaderboard(f, "--out", str(out))
    assert r.returncode == 2, r.stderr
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"harness: error: {f}: tracks[0].policies[1]: unknown policy "
                                                   "'no-such-policy'"), r.stderr
    assert not out.exists() and not r.stdout


def test_a_second_leaderboard_into_the_same_folder_is_refused_in_one_line(tmp_path):
    from harness.leaderboard.sweep import writer

    f = board(tmp_path, ["default"])
    out = tmp_path / "out"
    with writer(out):  # a first sweep writing there (this process)
        r = leaderboard(f, "--out", str(out), "--seeds", "1")
    assert r.returncode == 2, r.stderr
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "another harness leaderboard (pid" in lines[0] and "--out" in lines[0], r.stderr
    assert sorted(p.name for p in out.iterdir()) == [".sweep.lock"]  # nothing of the second's written



def test_a_sweep_resumes_from_its_folders_own_copy_of_the_file(tmp_path):
    """What report suggests for a folder without leaderboard.json: ``--resume`` with the folder's
    own leaderboard.yaml (it was a SameFileError traceback: the file copied onto itself)."""
    sc = tmp_path / "short.yaml"
    sc.write_text(yaml.safe_dump({"name": "short", "description": "chain, one user", "duration_s": 10, "app": "chain",
                                  "load": {"mode": "closed", "steps": [{"at_s": 0, "value": 1}]}}))
    out = tmp_path / "out"
    assert leaderboard(board(tmp_path, ["default"], [str(sc)]), "--seeds", "1", "--out", str(out)).returncode == 0
    (out / "leaderboard.json").unlink()  # a sweep killed before its end
    r = leaderboard(str(out / "leaderboard.yaml"), "--resume", "--seeds", "1", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert (out / "leaderboard.json").exists() and "default" in (out / "ranked-sim.csv").read_text()
