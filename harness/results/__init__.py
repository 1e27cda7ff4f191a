"""Run directories: what a live run writes as it goes, its summary, and comparisons across runs."""
