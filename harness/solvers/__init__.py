"""Exact solvers (HiGHS through highspy): an optimum where the solver finishes, otherwise the
best placement found and a proven bound, so a gap can always be stated and labelled."""
