"""The training queue trains what the study's scripts read: every ablation variant's seeds and the
paper form's seeds (with its control) are jobs of the queue under the names the scripts look for."""

from __future__ import annotations

from studies.silgpo import ablations, agent, trainings


def test_every_model_the_ablations_and_the_paper_form_read_is_a_job_of_the_queue(tmp_path):
    queued = {job.path for job in trainings.jobs(tmp_path)}
    for _, encoder, sil in ablations.VARIANTS:
        for seed in (1, 2, 3):
            assert agent.model(tmp_path, trainings.EPISODES, encoder, sil, False, seed)[0] in queued, (encoder, sil, seed)
    for sil in ("auto", "off"):  # the paper form with the code's SIL rule and its control without SIL
        for seed in (1, 2, 3):
            assert agent.model(tmp_path, trainings.EPISODES, "gat", sil, False, seed, paper_form=True)[0] in queued


def test_the_paper_forms_seeds_come_each_beside_its_control():
    paper = [job.path.stem for job in trainings.jobs(groups=("paper",))]
    assert paper[:2] == ["sil-gpo-authors-gat-paper-s1", "sil-gpo-authors-gat-sil_off-paper-s1"]
    assert len(paper) == 6


def test_the_sweeps_first_instance_at_the_default_setting_is_the_rankings_seed_1_not_trained_twice(tmp_path):
    """At λ 2-4 (= 30 requests) seed 3 of the authors' generator is their instance and its training
    seed 1: the ranking's seed 1, the same world and flags. The sweeps read that model."""
    from harness.policies import world_learners
    from studies.silgpo import sweeps

    folder = tmp_path / "sweeps"
    ranking = agent.model(tmp_path, trainings.EPISODES, "gat", "auto", False, 1)
    for figure, value in (("arrival", (2, 4)), ("requests", 30)):
        assert sweeps.agent_model(figure, value, 0, folder, sweeps.RECIPE) == ranking
    elsewhere = sweeps.agent_model("arrival", (2, 4), 1, folder, sweeps.RECIPE)
    assert elsewhere[0].parent == folder and "--generator" in elsewhere[1]
    # what the sweep's own flags would train is that world and those Args
    own = ["--episodes", "2000", "--generator", "authors", "--instance", "3", "--sweep", "arrival=2,4", "--seed", "1"]
    a, _, g = world_learners.parse("sil-gpo", own)
    b, _, h = world_learners.parse("sil-gpo", ranking[1])
    assert a == b and g.to_place().tolist() == h.to_place().tolist() and (g.rate == h.rate).all()
    sweep_jobs = [job for job in trainings.jobs(tmp_path) if job.group == "sweeps"]
    assert len(sweep_jobs) == 14 * 3 - 1 and all(job.path.parent == folder for job in sweep_jobs)


def test_the_list_ends_with_what_is_left_at_the_pace_of_the_done_trainings(tmp_path):
    import json

    import torch

    models, work = tmp_path / "models", tmp_path / "work"
    queue = trainings.jobs(models, groups=("paper",))
    for job in queue[:2]:  # done: 2,000 episodes in 4,000 s, 2 s an episode
        job.path.parent.mkdir(parents=True, exist_ok=True)
        job.path.with_suffix(".json").write_text(json.dumps({"args": {"episodes": 2000}, "seconds": 4000.0}))
    resumed = queue[2].at(models, work).with_suffix(".ckpt")
    resumed.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"state": {"episode": 500}}, resumed)
    assert trainings.left(queue, models, work) == \
        "2 of 6 done; 7,500 episodes left in 4 trainings, about 4 lane-hours at the pace of the done ones"
