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
