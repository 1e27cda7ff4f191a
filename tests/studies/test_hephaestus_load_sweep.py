"""The load sweep's Markdown table: a row per policy, a column per rate, the agents' seeds as a
mean with its interval and each rate's lowest rejection in bold."""

from __future__ import annotations

from studies.hephaestus.load_sweep import markdown


def row(rate, policy, rejection, seed=""):
    return {"rate": rate, "policy": policy, "seed": seed, "rejection_pct": rejection}


def test_a_row_per_policy_a_column_per_rate_and_the_lowest_in_bold():
    rows = [row(2.0, "spread-ffd", 0.35), row(4.0, "spread-ffd", 1.06),
            row(2.0, "ds-ppo(cost)", 0.2, 1), row(2.0, "ds-ppo(cost)", 0.4, 2), row(4.0, "ds-ppo(cost)", 1.5, 1)]
    lines = markdown(rows, [2.0, 4.0, 8.0]).splitlines()
    assert lines[0] == "| rejection % | rate 2 | rate 4 | rate 8 |"
    assert lines[2] == "| spread-ffd | 0.35 | **1.06** | - |"
    # two seeds: mean 0.30, t(1) = 12.706 × sd 0.1414 / √2 = 1.27; the lowest at rate 2
    assert lines[3] == "| ds-ppo(cost) | **0.30 ± 1.27** | 1.50 | - |"
