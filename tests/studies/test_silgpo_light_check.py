"""The light recipe's check reads the finished models' greedy evaluations and says whether the
light recipe stands in for the full one: within 2 % of its best, or below."""

from __future__ import annotations

import json
import sys

import pytest

from studies.silgpo import light_check
from studies.silgpo.agent import light_model, model


def fake(path, episodes: int, delays: list[float]) -> None:
    path.with_suffix(".json").write_text(json.dumps({"args": {"episodes": episodes}}))
    rows = "\n".join(f"{10 * (i + 1)},{d},False" for i, d in enumerate(delays))
    path.with_suffix(".curve.csv").write_text("episode,delay,sil_on\n" + rows + "\n")


@pytest.mark.parametrize("light_best, stands", [(25.2, True), (24.0, True), (26.5, False)])
def test_the_light_recipe_stands_in_only_within_two_percent(tmp_path, monkeypatch, capsys, light_best, stands):
    for s, best in enumerate((24.8, 24.9, 25.0, 24.7, 25.1), 1):
        fake(model(tmp_path, 2000, "gat", "auto", False, s)[0], 2000, [30.0, best, best + 0.5])
    for s, jitter in enumerate((-0.05, 0.0, 0.05), 1):
        fake(light_model(tmp_path, s)[0], 400, [31.0, light_best + jitter, light_best + 1])
    monkeypatch.setattr(sys, "argv", ["light_check", "--models", str(tmp_path)])
    assert light_check.main() == 0
    out = capsys.readouterr().out
    assert ("does not stand in" in out) is not stands and f"light − full, best: {100 * (light_best / 24.9 - 1):+.2f} %" in out


def test_too_few_finished_models_say_so(tmp_path, monkeypatch, capsys):
    fake(light_model(tmp_path, 1)[0], 400, [30.0])
    fake(light_model(tmp_path, 2)[0], 100, [30.0])  # stopped short of the recipe's episodes: not finished
    monkeypatch.setattr(sys, "argv", ["light_check", "--models", str(tmp_path)])
    assert light_check.main() == 1
    err = capsys.readouterr().err
    assert "sil-gpo-authors-light-s2: not ready" in err and "1 light, 0 full" in err
