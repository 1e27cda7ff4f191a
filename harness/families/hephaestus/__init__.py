"""HephaestusForge (paper 001): deployment requests admitted onto one of C clusters; DeepSets
PPO and DQN, the greedy baselines, and the same deciders as placers on the one ground. See
``harness/families/hephaestus/README.md``."""

from harness.families.hephaestus import admission, learners  # noqa: F401 — they register themselves
