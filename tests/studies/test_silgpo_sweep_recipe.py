"""The sweeps' recipe check: the light recipe stands in for the full one only within 2 % of its
best, and the full recipe stopped early reports what its seeds had by then; the sweeps' episode
count is one where every committed ranking seed had its best."""

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


@pytest.mark.parametrize("light_best, stands", [(25.2, True), (24.0, True), (26.5, False)])
def test_the_light_recipe_stands_in_only_within_two_percent(tmp_path, monkeypatch, capsys, light_best, stands):
    for s, best in enumerate((24.8, 24.9, 25.0, 24.7, 25.1), 1):
        fake(model(tmp_path, 2000, "gat", "auto", False, s)[0], 2000, [30.0, best, best + 0.5])
    for s, jitter in enumerate((-0.05, 0.0, 0.05), 1):
        fake(light_model(tmp_path, s)[0], 400, [31.0, light_best + jitter, light_best + 1])
    monkeypatch.setattr(sys, "argv", ["sweep_recipe", "--models", str(tmp_path)])
    assert sweep_recipe.main() == 0
    out = capsys.readouterr().out
    assert ("does not stand in" in out) is not stands and f"light − full, best: {100 * (light_best / 24.9 - 1):+.2f} %" in out


def test_a_training_stopped_early_reports_the_best_of_its_first_episodes():
    curve = Curve(episodes=[100, 200, 300, 400], delay=[30.0, 26.0, 27.0, 25.0])
    assert sweep_recipe.best_within(curve, 250) == 26.0 and sweep_recipe.best_within(curve, 400) == 25.0
    late = Curve(episodes=[100, 200, 300, 1310], delay=[30.0, 25.0, 26.0, 24.6])
    assert sweep_recipe.shortest_at_best({1: curve, 2: late}) == 1400  # 1,310 rounded up to the step


def test_the_sweeps_train_long_enough_for_every_committed_ranking_seed(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["sweep_recipe"])  # the committed models (studies/silgpo/models)
    assert sweep_recipe.main() == 0
    assert f"the sweeps train {sweeps.EPISODES}: enough" in capsys.readouterr().out


def test_too_few_finished_models_say_so(tmp_path, monkeypatch, capsys):
    fake(light_model(tmp_path, 2)[0], 100, [30.0])  # stopped short of the recipe's episodes: not finished
    monkeypatch.setattr(sys, "argv", ["sweep_recipe", "--models", str(tmp_path)])
    assert sweep_recipe.main() == 1
    err = capsys.readouterr().err
    assert "sil-gpo-authors-light-s2: not ready" in err and "of the full recipe: 0" in err
