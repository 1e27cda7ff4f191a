"""SIL-GPO's live analysis reads the seeds of several sessions as one: a seed added later in its
own session joins the others; a seed run twice counts once, its first run."""

from __future__ import annotations

import json

from studies.silgpo.live import runs_of


def run(session, policy: str, seed: int, started: str, mean: float, partial: bool = False) -> None:
    folder = session / f"{policy}-s{seed}"
    folder.mkdir(parents=True)
    (folder / "summary.json").write_text(json.dumps({"policy": policy, "seed": seed, "started": started, "mean_ms": mean,
                                                     "scenario_world": "servicegraph", "partial": partial}))


def test_the_seeds_of_two_sessions_are_read_together_each_once(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for seed in (0, 1):
        run(a, "preferred", seed, f"2026-11-29T02:5{seed}", 100.0 + seed)
    run(b, "preferred", 2, "2026-11-29T07:40", 102.0)
    run(b, "preferred", 1, "2026-11-29T07:45", 999.0)  # seed 1 again: the first run stands
    run(b, "queue-greedy", 2, "2026-11-29T07:41", 90.0, partial=True)  # stopped part-way: not counted
    runs = runs_of(a, b)
    assert [(r["seed"], r["mean_ms"]) for r in runs["preferred"]] == [(0, 100.0), (1, 101.0), (2, 102.0)]
    assert "queue-greedy" not in runs


def test_a_model_given_by_path_is_shown_by_its_file_name():
    from studies.silgpo.live import shown

    assert shown("sil-gpo[model=/work/x/models/sil-gpo-authors-gat-s1.pt]") == "sil-gpo[sil-gpo-authors-gat-s1]"
    assert shown("queue-greedy") == "queue-greedy" and shown("reach[model=auto]") == "reach[auto]"
