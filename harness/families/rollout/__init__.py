"""The multi-agent rollout (paper 003): many small apps on a three-layer continuum, the greedy
best-fit, the rollout over it and the MILP, in paper 003's own problem and on the one ground.
See ``harness/families/rollout/README.md``."""

# the modules that register what the family adds (harness.families.load imports them)
REGISTERS = ("cost_delay", "milp_placer", "rollout")
