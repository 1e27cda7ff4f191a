"""The Fig. 8 live grid's bookkeeping: a seed's session counts only when whole, and the paper's
averages are REACH's mean against the other's per setting, averaged over the settings."""

from __future__ import annotations

import json

import pytest

from studies.reach import fig8_live


def session(folder, policies: dict[str, float], partial: str | None = None):
    for policy, mean in policies.items():
        run = folder / "20261129T000000Z-fig8" / f"{policy}-s0"
        run.mkdir(parents=True)
        (run / "summary.json").write_text(json.dumps({"policy": policy, "seed": 0, "mean_ms": mean,
                                                      "partial": policy == partial}))


def test_a_whole_session_counts_and_a_partial_one_does_not(tmp_path):
    session(tmp_path / "a", {"reach": 1.0, "default": 2.0})
    session(tmp_path / "b", {"reach": 1.0, "default": 2.0}, partial="default")
    assert fig8_live.complete(tmp_path / "a", 2) is not None
    assert fig8_live.complete(tmp_path / "b", 2) is None and fig8_live.complete(tmp_path / "c", 2) is None


def test_the_averages_are_over_settings_of_reach_against_each(tmp_path, capsys):
    cells = [("chain", 4), ("chain", 12)]
    for (app, pods), (reach, default, rsdql) in zip(cells, [(80, 100, 90), (60, 100, 50)]):
        for seed in range(2):
            session(tmp_path / f"{app}-{pods}" / f"s{seed}",
                    {"reach[model=auto]": reach + seed, "default": default + seed, "rsdql[model=auto]": rsdql + seed})
    assert fig8_live.table(tmp_path, cells, ["reach[model=auto]", "default", "rsdql[model=auto]"]) == 0
    out = capsys.readouterr().out
    against_default = 100 * ((80.5 / 100.5 - 1) + (60.5 / 100.5 - 1)) / 2
    assert f"REACH against default: {against_default:+.2f} %" in out and "over 2 settings (paper -21.56 %)" in out
    rows = (tmp_path / "fig8.csv").read_text().splitlines()
    assert rows[0].startswith("app,pods,policy,seeds,mean_ms,ci95_ms") and len(rows) == 1 + 2 * 3
    assert against_default == pytest.approx(-29.85, abs=0.01)
