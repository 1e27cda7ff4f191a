"""A leaderboard on a Ray cluster of two nodes started as on two machines (``ray start --head``,
then a node in a network namespace of its own joining it by address): every cell played on one of
the two, both nodes used, and the long table the one-process sweep's, byte for byte
(``studies.scale.ray_cluster``, which plays ``leaderboards/scale.yaml`` so)."""

from __future__ import annotations

import json
import secrets

import pytest
import yaml

from studies.scale.ray_cluster import two_nodes
from tests.conftest import unique_subnet
from tests.leaderboard.test_leaderboard import leaderboard


def small_continuum(tmp_path) -> str:
    """A generated 12-node continuum, a 4-service app on it and two minutes of a day's shape."""
    from harness.generators.callgraph import app
    from harness.generators.continuum import continuum
    from harness.generators.day import scenario
    from harness.generators.files import save
    from harness.generators.profile import modelled_profile

    inv, wm = continuum(12, seed=3, name="small"), app(4, seed=3, name="small-app", pods=8)
    save(inv, tmp_path / "inventory.yaml")
    save(wm, tmp_path / "app.json")
    save(modelled_profile(wm, inv), tmp_path / "profile.json")
    save(scenario(str(tmp_path / "app.json"), 5.0, seed=3, name="day", duration_s=120, step_s=30,
                  rescheduler_period_s=30), tmp_path / "day.yaml")
    doc = {"version": 1, "name": "small", "tracks": [
        {"name": "small", "inventory": str(tmp_path / "inventory.yaml"), "profile": str(tmp_path / "profile.json"),
         "scenarios": [str(tmp_path / "day.yaml")], "policies": ["default", "kubedsm", "binpack-greedy"]}]}
    f = tmp_path / "board.yaml"
    f.write_text(yaml.safe_dump(doc))
    return str(f)


@pytest.mark.root
@pytest.mark.load_tolerant
def test_two_ray_nodes_play_the_cells_and_give_the_one_process_table(as_root, tmp_path):
    pytest.importorskip("ray")
    f = small_continuum(tmp_path)
    one = leaderboard(f, "--seeds", "2", "--jobs", "1", "--out", str(tmp_path / "pool"))
    assert one.returncode == 0, one.stderr[-3000:]
    subnet = unique_subnet().rsplit(".", 2)[0]  # 10.X.0.0/16 -> 10.X
    tag = secrets.token_hex(2)
    with two_nodes(tmp_path / "ray", subnet=f"{subnet}.7", port=20000 + secrets.randbelow(10000),
                   netns=f"hrt-{tag}", veth=(f"hrt-{tag}-h", f"hrt-{tag}-n")) as address:
        on_ray = leaderboard(f, "--seeds", "2", "--ray", address, "--out", str(tmp_path / "ray"),
                             env={"RAY_AUTH_MODE": "disabled"})
    assert on_ray.returncode == 0, on_ray.stderr[-3000:]
    meta = json.loads((tmp_path / "ray/leaderboard.json").read_text())
    # two cells (one per seed) on a cluster of two one-CPU nodes: both run at once, one on each
    assert meta["executor"] == f"ray:{address}"
    assert meta["cells_per_node"] == {f"{subnet}.7.1": 1, f"{subnet}.7.2": 1}
    assert "played on 2 Ray nodes" in on_ray.stdout
    assert (tmp_path / "ray/leaderboard.csv").read_text() == (tmp_path / "pool/leaderboard.csv").read_text()
