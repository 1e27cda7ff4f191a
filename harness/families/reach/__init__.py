"""REACH (paper 000): PPO with invalid-action masking for rescheduling on the one ground, and
RSDQL as REACH adapted it. See ``harness/families/reach/README.md``."""

# the modules that register what the family adds (harness.families.load imports them)
REGISTERS = ("reach", "rsdql")
