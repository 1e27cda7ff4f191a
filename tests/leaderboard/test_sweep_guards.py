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


def board(tmp_path, policies) -> str:
    f = tmp_path / "board.yaml"
    f.write_text(yaml.safe_dump({"version": 1, "name": "t", "tracks": [
        {"name": "t", "apps": ["chain"], "scenarios": ["steady"], "policies": policies}]}))
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
