"""Speed and cost measurements, each a ratio against a reference measured in the same run (the
host's speed drifts up to 2x within minutes). Run one as ``python -m benchmarks.<name>`` from the
repository root; ``make bench`` runs them all. Paper reproductions live in ``studies/``."""
