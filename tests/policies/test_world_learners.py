"""``harness train`` for the learners of worlds of their own (SIL-GPO's deployment world,
HephaestusForge's admission world): a model, its metadata and its curve are written, the model
loads and acts, and a bad setting is one line with status 2."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import numpy as np
import pytest
import torch

from tests.conftest import REPO


def harness(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=300)


def test_sil_gpo_trains_from_the_cli_and_its_model_deploys(tmp_path):
    r = harness("train", "--policy", "sil-gpo", "--episodes", "4", "--batch-episodes", "2", "--evaluate-every", "2",
                "--encoder", "mlp", "--instance", "0", "--sweep", "requests=10", "--out", str(tmp_path), "--name", "m")
    assert r.returncode == 0, r.stderr
    meta = json.loads((tmp_path / "m.json").read_text())
    assert meta["policy"] == "sil-gpo" and meta["world_config"] == {"instance": 0, "generator": "harness",
                                                                    "sweep": "requests=10", "paper_form": False}
    rows = list(csv.DictReader((tmp_path / "m.curve.csv").open()))
    assert [int(r["episode"]) for r in rows] == [2, 4] and (tmp_path / "m.curve.png").stat().st_size > 0
    from harness.families.silgpo.agent import deploy, load_actor
    from harness.families.silgpo.learners import ServiceGraphWorld
    from harness.families.silgpo.world import delay

    g = ServiceGraphWorld(**meta["world_config"]).build()
    assert delay(g, deploy(g, load_actor(tmp_path / "m.pt", g)[0])).total == float(rows[-1]["delay"])  # the last
    from harness.policies.world_learners import has_episodes  # the studies' rule for a model they may use

    assert has_episodes(tmp_path / "m.pt", 4) and not has_episodes(tmp_path / "m.pt", 5)
    assert not has_episodes(tmp_path / "other.pt", 1)


def test_rsdql_deploy_trains_from_the_cli_and_keeps_its_best_net(tmp_path):
    import pytest

    from harness.errors import UserError
    from harness.families.silgpo import rsdql as rsdql_deploy
    from harness.families.silgpo.agent import load_actor
    from harness.families.silgpo.learners import ServiceGraphWorld
    from harness.families.silgpo.world import delay

    r = harness("train", "--policy", "rsdql-deploy", "--episodes", "3", "--evaluate-every", "1", "--encoder", "mlp",
                "--instance", "0", "--sweep", "requests=10", "--out", str(tmp_path), "--name", "q")
    assert r.returncode == 0, r.stderr
    g = ServiceGraphWorld(instance=0, sweep="requests=10").build()
    rows = list(csv.DictReader((tmp_path / "q.curve.csv").open()))
    net, meta = rsdql_deploy.load_net(tmp_path / "q.pt", g)
    assert meta["policy"] == "rsdql-deploy" and len(rows) == 3
    assert delay(g, rsdql_deploy.deploy(g, net)).total == min(float(r["delay"]) for r in rows)  # the best kept
    with pytest.raises(UserError, match="not a SIL-GPO one"):
        load_actor(tmp_path / "q.pt", g)


def test_ds_ppo_trains_from_the_cli(tmp_path):
    r = harness("train", "--policy", "ds-ppo", "--total-steps", "400", "--envs", "2", "--steps", "100",
                "--clusters", "3", "--out", str(tmp_path), "--name", "d")
    assert r.returncode == 0, r.stderr
    meta = json.loads((tmp_path / "d.json").read_text())
    assert meta["world"] == "multicluster" and meta["world_config"]["clusters"] == 3
    rows = list(csv.DictReader((tmp_path / "d.curve.csv").open()))
    assert int(rows[-1]["env_steps"]) == 400 and np.isfinite(float(rows[-1]["mean_return"]))


def test_the_authors_generator_draws_their_instance_of_a_setting():
    """Seed 3 of their generator at the default setting, named as a sweep point, is the authors'
    default instance; harness's generator at seed 3 is another."""
    from harness.families.silgpo.learners import ServiceGraphWorld

    theirs = ServiceGraphWorld().build()
    same = ServiceGraphWorld(instance=3, generator="authors", sweep="arrival=2,4").build()
    other = ServiceGraphWorld(instance=3, sweep="arrival=2,4").build()
    assert [c.tolist() for c in same.chains] == [c.tolist() for c in theirs.chains]
    assert same.to_place().tolist() == theirs.to_place().tolist() and np.array_equal(same.rate, theirs.rate)
    assert [c.tolist() for c in other.chains] != [c.tolist() for c in theirs.chains]


def test_a_model_of_the_other_generators_instance_is_refused_by_the_leaderboard(tmp_path):
    """Seed 4 of the authors' generator is not the leaderboard's ``seed-4`` (harness's): the two
    worlds have the same sizes, so only the model's metadata can tell."""
    from harness.errors import UserError
    from harness.families.silgpo import commands
    from harness.policies.world_learners import parse, train_and_save

    flags = ["--episodes", "2", "--batch-episodes", "2", "--encoder", "mlp", "--generator", "authors", "--instance", "4"]
    args, world, built = parse("sil-gpo", flags)
    path, _ = train_and_save("sil-gpo", args, world, built, tmp_path, "sil-gpo-seed-4", False, lambda *a: None)
    with pytest.raises(UserError, match="generator: authors"):
        commands.learned("sil-gpo", commands.world("seed-4", "default").build(), path, "seed-4", "default")


def test_a_bad_world_setting_is_one_line_and_status_2(tmp_path):
    for args, says in ((("--sweep", "arrival=3"), "arrival=LOW,HIGH"),
                       (("--sweep", "arrival=3,5"), "needs a generated instance"),
                       (("--generator", "mine"), "--generator: 'mine' is not a generator"),
                       (("--generator", "authors", "--instance", "6", "--sweep", "chain=2,4"), "stops at seed 6"),
                       (("--encoder", "gat", "--epsiodes", "3"), "--epsiodes")):
        r = harness("train", "--policy", "sil-gpo", *args, "--out", str(tmp_path))
        assert r.returncode == 2 and says in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not list(tmp_path.iterdir())  # nothing half-written


def test_a_compiled_training_is_one_model_whatever_its_process_did_before(tmp_path, monkeypatch):
    """Compiled GAT: trained 10 episodes by a fresh process, or by a process at another thread
    count that compiled other nets first, stopped at 5 and resumed: the same weights and curve.
    Before each compile started from an empty cache, dynamo's full list of variants ran the rest
    eagerly, and a resumed training parted from an uninterrupted one; before trainings pinned
    torch's threads, the caller's count changed the rounding."""
    from harness.families.silgpo import agent as silgpo
    from harness.policies.world_learners import parse, train_and_save
    from harness.rl.threads import torch_threads

    monkeypatch.setattr(silgpo, "CHECKPOINT_EVERY", 5)
    flags = ["--encoder", "gat", "--compile", "on", "--instance", "0", "--sweep", "requests=10",
             "--batch-episodes", "5", "--evaluate-every", "5"]
    r = harness("train", "--policy", "sil-gpo", "--episodes", "10", *flags, "--out", str(tmp_path), "--name", "fresh")
    assert r.returncode == 0, r.stderr

    def run(name, episodes, extra=(), resume=False):
        args, world, built = parse("sil-gpo", ["--episodes", str(episodes), *flags, *extra])
        return train_and_save("sil-gpo", args, world, built, tmp_path, name, False, lambda *a: None, resume)

    with torch_threads(1 if torch.get_num_threads() > 1 else 2):  # another count than the default
        run("other", 5, ("--encoder", "mlp", "--seed", "2"))  # other variants compiled first
        run("resumed", 5)
        resumed, meta = run("resumed", 10, resume=True)
    assert meta["resumed_from_episode"] == 5
    a, b = (torch.load(p, weights_only=False)["state_dict"] for p in (tmp_path / "fresh.pt", resumed))
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert (tmp_path / "fresh.curve.csv").read_text() == (tmp_path / "resumed.curve.csv").read_text()


@pytest.mark.parametrize("learner,extra", [("sil-gpo", ["--batch-episodes", "5", "--evaluate-every", "5"]),
                                           ("rsdql-deploy", ["--batch", "32", "--evaluate-every", "5"])])
def test_a_stopped_training_resumes_to_the_same_model_bit_for_bit(tmp_path, monkeypatch, learner, extra):
    """Trained 10 episodes straight, or 5 then resumed to 10 from its .ckpt (saved every 5 here):
    the same weights and curve. Other flags on resume are one line and status 2."""
    from harness.families.silgpo import agent as silgpo, rsdql as rsdql_deploy

    monkeypatch.setattr(silgpo, "CHECKPOINT_EVERY", 5)
    monkeypatch.setattr(rsdql_deploy, "CHECKPOINT_EVERY", 5)
    from harness.policies.world_learners import parse, train_and_save

    flags = ["--encoder", "mlp", "--instance", "0", "--sweep", "requests=10", *extra]

    def run(name, episodes, resume=False):
        args, world, built = parse(learner, ["--episodes", str(episodes), *flags])
        return train_and_save(learner, args, world, built, tmp_path, name, False, lambda *a: None, resume)

    straight, _ = run("one", 10)
    run("two", 5)
    assert (tmp_path / "two.ckpt").exists()
    resumed, meta = run("two", 10, resume=True)
    assert meta["resumed_from_episode"] == 5
    a, b = (torch.load(p, weights_only=False)["state_dict"] for p in (straight, resumed))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert (tmp_path / "one.curve.csv").read_text() == (tmp_path / "two.curve.csv").read_text()
    if learner != "sil-gpo":
        return
    r = harness("train", "--policy", learner, "--episodes", "30", *flags, "--seed", "2", "--out", str(tmp_path),
                "--name", "two", "--resume")
    assert r.returncode == 2 and "seed: 1 saved, 2 now" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = harness("train", "--policy", learner, "--episodes", "30", *flags, "--out", str(tmp_path), "--name", "two")
    assert r.returncode == 2 and "--resume to go on" in r.stderr
    r = harness("train", "--policy", "reach", "--resume")
    assert r.returncode == 2 and "resumable: sil-gpo, rsdql-deploy" in r.stderr
