"""The claims ledger is the one source of harness's verdicts: README.md's Results and each study's
headline table are rendered from it, and a claim cannot say more than its evidence."""

import pytest
from pydantic import ValidationError

from studies import ledger


@pytest.fixture(scope="module")
def claims():
    return ledger.load()


def test_readme_and_every_study_agree_with_the_ledger(claims):
    assert ledger.stale(claims) == []


def test_a_number_changed_in_the_ledger_is_caught(claims):
    """The check above can fail: one headline number changed, README.md no longer agrees."""
    c = next(c for c in claims.claims if c.headline and c.harness)
    changed = claims.model_copy(deep=True)
    next(x for x in changed.claims if x.id == c.id).harness.value = c.harness.value + " (changed)"
    assert any(p.startswith("README.md") for p in ledger.stale(changed))


def test_every_claim_has_a_verdict_and_what_it_needs():
    base = {"id": "x", "paper": "000", "claim": "c", "paper_value": "1", "where": "Fig. 1", "paper_world": "live",
            "why": "w"}
    with pytest.raises(ValidationError, match="needs harness's measurement"):
        ledger.Claim.model_validate({**base, "verdict": "reproduced"})
    measured = {"value": "1", "n": "3 repeats", "world": "live", "semantics": "paper", "command": "harness run x",
                "date": "2026-11-28", "commit": "abcdef1"}
    with pytest.raises(ValidationError, match="refuted"):
        ledger.Claim.model_validate({**base, "verdict": "refuted", "harness": measured})
    with pytest.raises(ValidationError):
        ledger.Claim.model_validate({**base})  # no verdict


def test_readme_cells_stay_short(claims):
    for row in ledger.results_table(claims).splitlines()[2:]:
        cells = row.strip("|").split(" | ")
        assert all(len(c) <= 300 for c in cells), row
