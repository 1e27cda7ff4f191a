"""HephaestusForge (paper 001): deployment requests admitted onto one of C clusters; DeepSets
PPO and DQN, the greedy baselines, and the same deciders as placers on the one ground. See
``harness/families/hephaestus/README.md``."""

# the modules that register what the family adds (harness.families.load imports them)
REGISTERS = ("admission", "learners")
