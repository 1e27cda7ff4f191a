

def test_a_command_from_another_folder_finds_the_last_testbed_provisioned(tmp_path, monkeypatch):
    """Issue 43: the default state folder was relative to the current one, so `harness status`
    from elsewhere said no testbed existed while one ran."""
    import subprocess
    import sys
    from pathlib import Path

    from harness.spec.testbed_state import default_state_dir, remember_state_dir, save_state, state_path
    from harness.testbed.simulated import simulated_state
    from harness.spec.inventory import load_inventory

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    there = tmp_path / "project" / ".harness"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    save_state(there, simulated_state(load_inventory(None)))
    assert default_state_dir() == (Path(".harness"), False)  # a state written is not remembered: provision does that
    remember_state_dir(there)
    assert default_state_dir() == (there.resolve(), True)
    (elsewhere / ".harness").mkdir()
    save_state(elsewhere / ".harness", simulated_state(load_inventory(None)))  # one here wins
    assert default_state_dir() == (Path(".harness"), False)
    state_path(elsewhere / ".harness").unlink()
    state_path(there).unlink()
    assert default_state_dir() == (Path(".harness"), False)  # the last one gone: here, as before
    r = subprocess.run([sys.executable, "-m", "harness", "status"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "no testbed is provisioned" in r.stderr
