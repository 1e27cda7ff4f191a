"""REACH (paper 000): PPO with invalid-action masking for rescheduling on the one ground, and
RSDQL as REACH adapted it. See ``harness/families/reach/README.md``."""

from harness.families.reach import reach, rsdql  # noqa: F401 — they register their policies
