"""Scoring shared by report, curve and bench: the `evaluate` metric modules, statistics, calibration, baselines,
error analysis, what a model cost, and prediction timing."""
