"""The sweeps' recipe check: the light recipe stands in for the full one only when its best is
shown within 2 % (the interval's upper end), and the full recipe stopped early reports what its
seeds had by then."""

from __future__ import annotations

import json
import sys

import pytest

from harness.families.silgpo.agent import Curve
from studies.silgpo import sweep_recipe, sweeps
from studies.silgpo.agent import light_model, model


def fake(path, episodes: int, delays: list[float], every: int = 10) -> None:
    path.with_suffix(".json").write_text(json.dumps({"args": {"episodes": episodes}}))
    rows = "\n".join(f"{every * (i + 1)},{d},False" for i, d in enumerate(delays))
    path.with_suffix(".curve.csv").write_text("episode,delay,sil_on\n" + rows + "\n")


# full bests 24.7-25.1 (mean 24.9): light at 25.0 is +0.4 % with an interval of about ±0.8 %
# (stands in); at 26.5, +6.4 % (does not); at 24.0, below
@pytest.mark.parametrize("light_best, stands", [(25.0, True), (24.0, True), (26.5, False)])
def test_the_light_recipe_stands_in_only_within_two_percent(tmp_path, monkeypatch, capsys, light_best, stands):
    for s, best in enumerate((24.8, 24.9, 25.0, 24.7, 25.1), 1):
        fake(model(tmp_path, 2000, "gat", "auto", False, s)[0], 2000, [30.0, best, best + 0.5])
    for s, jitter in enumerate((-0.05, 0.0, 0.05), 1):
        fake(light_model(tmp_path, s)[0], 400, [31.0, light_best + jitter, light_best + 1])
    monkeypatch.setattr(sys, "argv", ["sweep_recipe", "--models", str(tmp_path)])
    assert sweep_recipe.main() == 0
    out = capsys.readouterr().out
    assert ("is not shown to stand in" in out) is not stands and f"light − full, best: {100 * (light_best / 24.9 - 1):+.2f} %" in out


def test_the_latest_first_best_is_the_latest_episode_a_seed_reached_its_best():
    early = Curve(episodes=[100, 200, 300, 400], delay=[30.0, 26.0, 27.0, 25.0])
    late = Curve(episodes=[100, 200, 300, 1310], delay=[30.0, 25.0, 26.0, 24.6])
    assert sweep_recipe.latest_first_best({1: early, 2: late}) == 1310


def test_the_committed_ranking_seeds_print_what_a_shorter_training_would_report(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["sweep_recipe"])  # the committed models (studies/silgpo/models)
    assert sweep_recipe.main() == 0
    out = capsys.readouterr().out
    assert " 2000 episodes: 5 of 5 seeds at their 2000-episode best" in out
    assert f"the sweeps train {sweeps.EPISODES}" in out


def test_too_few_finished_models_say_so(tmp_path, monkeypatch, capsys):
    fake(light_model(tmp_path, 2)[0], 100, [30.0])  # stopped short of the recipe's episodes: not finished
    monkeypatch.setattr(sys, "argv", ["sweep_recipe", "--models", str(tmp_path)])
    assert sweep_recipe.main() == 1
    err = capsys.readouterr().err
    assert "sil-gpo-authors-light-s2: not ready" in err and "0 of the full recipe's 5 seeds" in err
