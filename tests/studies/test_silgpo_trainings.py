"""The training queue trains what the study's scripts read: every ablation variant's seeds and the
paper form's seeds (with its control) are jobs of the queue under the names the scripts look for."""

from __future__ import annotations

import json

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


def save(path, episodes, delays):
    """A finished model as the study reads it: its .json and an evaluation every 100 episodes."""
    path.with_suffix(".json").write_text(json.dumps({"args": {"episodes": episodes}}))
    path.with_suffix(".curve.csv").write_text(
        "episode,delay,sil_on\n" + "".join(f"{e},{d},False\n" for e, d in zip(range(100, episodes + 1, 100), delays)))


def test_a_late_sweep_model_is_continued_and_the_figures_still_read_its_first_2000_episodes(tmp_path):
    """The "longer" group goes on with a sweep model whose best came in its last 400 episodes, not
    with one that had its best early; the sweeps read the recipe's best from the continued curve
    as before, and the continued best beside it once the continuation is done."""
    from studies.silgpo import sweeps

    folder = tmp_path / "sweeps"
    folder.mkdir()
    (late_path, late_argv), (early_path, _) = (sweeps.agent_model("chain", (3, 5), k, folder, sweeps.RECIPE)
                                               for k in (0, 1))

    save(late_path, 2000, [30.0] * 18 + [29.0, 30.0])  # best at 1,900
    save(early_path, 2000, [30.0] * 4 + [28.0] + [30.0] * 15)  # best at 500
    longer = trainings.jobs(tmp_path, groups=("longer",))
    assert [(job.path, job.episodes()) for job in longer] == [(late_path, sweeps.LONGER)]
    assert longer[0].argv == [*late_argv[:1], str(sweeps.LONGER), *late_argv[2:]]  # the same training, longer
    kept = late_path.with_suffix(".curve.csv").read_text()
    assert trainings.standing(longer[0], tmp_path, tmp_path / "work") == "passed by: no state saved at episode 2,000"
    assert trainings.left(longer, tmp_path, tmp_path / "work") == \
        "0 of 1 done; 0 episodes left in 0 trainings; 1 passed by (no state saved to go on from)"
    _, what, _ = trainings.run(longer[0], tmp_path, tmp_path / "work")  # no state saved here: not trained anew
    assert what.startswith("passed by: no state saved at episode 2,000")
    assert late_path.with_suffix(".curve.csv").read_text() == kept
    anew = trainings.jobs(tmp_path, groups=("longer",), anew=True)[0]  # --anew: trained from the start instead
    assert trainings.standing(anew, tmp_path, tmp_path / "work") == "not started"
    assert trainings.left([anew], tmp_path, tmp_path / "work") == "0 of 1 done; 3,000 episodes left in 1 trainings"
    read = {k: (sweeps.agent_delay("chain", (3, 5), k, folder, sweeps.RECIPE, ready_only=True),
                sweeps.continued_delay("chain", (3, 5), k, folder, sweeps.RECIPE)) for k in (0, 1)}
    R = sweeps.Reading
    assert read == {0: (R(29.0, None), (None, True)), 1: (R(28.0, None), (R(28.0, None), False))}  # the late one's pending
    save(late_path, sweeps.LONGER, [30.0] * 18 + [29.0, 30.0] + [28.5] * 5 + [27.5] * 5)
    assert sweeps.agent_delay("chain", (3, 5), 0, folder, sweeps.RECIPE, ready_only=True) == R(29.0, None)
    assert sweeps.continued_delay("chain", (3, 5), 0, folder, sweeps.RECIPE) == (R(27.5, None), True)
    assert trainings.jobs(tmp_path, groups=("longer",))[0].done(tmp_path, tmp_path / "work")


def test_a_continuation_trained_anew_that_parts_from_the_kept_curve_is_moved_aside(tmp_path, monkeypatch):
    """Not kept, not counted done, not trained again; the kept curve the figures read unchanged."""
    from harness.policies import world_learners
    from studies.silgpo import sweeps

    folder, work = tmp_path / "sweeps", tmp_path / "work"
    folder.mkdir()
    path, _ = sweeps.agent_model("chain", (3, 5), 0, folder, sweeps.RECIPE)

    save(path, 2000, [30.0] * 18 + [29.0, 30.0])  # late: its best at 1,900
    kept = path.with_suffix(".curve.csv").read_text()
    job = trainings.jobs(tmp_path, groups=("longer",), anew=True)[0]
    trained = []
    monkeypatch.setattr(world_learners, "trained", lambda learner, argv, at, progress: trained.append(at) or
                        save(at, sweeps.LONGER, [30.0] * 17 + [29.5] + [28.0] * 12))  # parts at 1,800
    assert trainings.run(job, tmp_path, work)[1].startswith("trained, not kept")
    at = job.at(tmp_path, work)
    assert not at.with_suffix(".json").exists() and at.with_suffix(".not-kept.json").exists()
    assert path.with_suffix(".curve.csv").read_text() == kept
    assert not job.done(tmp_path, work) and trainings.up_next([job], set(), tmp_path, work) == []
    assert trainings.standing(job, tmp_path, work).startswith("trained anew, not kept")
    assert trainings.left([job], tmp_path, work) == "0 of 1 done; 0 episodes left in 0 trainings; 1 trained anew, not kept"
    assert trainings.run(job, tmp_path, work)[1].startswith("trained anew, not kept") and len(trained) == 1


def test_a_continuation_is_kept_only_if_it_repeats_the_kept_curves_first_episodes(tmp_path):
    def curve(name, delays):
        path = tmp_path / f"{name}.pt"
        path.with_suffix(".curve.csv").write_text(
            "episode,delay,sil_on\n" + "".join(f"{100 * (i + 1)},{d},False\n" for i, d in enumerate(delays)))
        return path

    kept = curve("kept", [30.0, 29.0, 29.5])
    assert trainings.same_start(curve("longer", [30.0, 29.0, 29.5, 28.0]), kept, 300)
    assert not trainings.same_start(curve("other", [30.0, 29.1, 29.5, 28.0]), kept, 300)  # not the same training
    assert trainings.same_start(curve("early", [30.0, 29.0, 30.0]), kept, 200)  # only the first 200 compared


def test_a_begun_training_goes_first_and_a_late_model_goes_on_in_the_same_run(tmp_path):
    """Asked again as each training ends, the queue puts work begun before work not started (its
    state is only in the work folder), never offers a job twice in a run, passes by a continuation
    with no state to go on from, and offers a late model's continuation once the model is done."""
    import torch

    from studies.silgpo import sweeps

    models, work = tmp_path / "models", tmp_path / "work"
    queue = trainings.jobs(models, groups=("sweeps", "longer"))
    first, second, third = queue[:3]
    begun = third.at(models, work).with_suffix(".ckpt")
    begun.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"state": {"episode": 500}}, begun)
    assert trainings.up_next(queue, set(), models, work)[:3] == [third, first, second]
    assert trainings.up_next(queue, {third.key(), first.key()}, models, work)[0] == second

    # the first ends late, with its state saved at 2,000 here: its continuation comes next, begun
    first.path.parent.mkdir(parents=True, exist_ok=True)
    first.path.with_suffix(".json").write_text(json.dumps({"args": {"episodes": 2000}}))
    first.path.with_suffix(".curve.csv").write_text(
        "episode,delay,sil_on\n" + "".join(f"{e},{30.0 - (e == 1900)},False\n" for e in range(100, 2001, 100)))
    torch.save({"state": {"episode": 2000}}, first.at(models, work).with_suffix(".ckpt"))
    tried = {third.key(), first.key()}
    again = trainings.jobs(models, groups=("sweeps", "longer"))
    on = trainings.up_next(again, tried, models, work)[0]
    assert (on.group, on.path, on.episodes(), on.goes_on_from) == ("longer", first.path, sweeps.LONGER, 2000)
    first.at(models, work).with_suffix(".ckpt").unlink()  # a fresh machine: nothing to go on from
    assert all(job.group != "longer" for job in trainings.up_next(again, tried, models, work))
