"""Seeded random search per side (`compare run --tune N`), chosen on validation only."""

from compare.tune.selection import expected_max, select_trial, tuning_record
from compare.tune.space import sample_trials, search_space, trial_flags, trial_name, tuned_sides

__all__ = [
    "expected_max",
    "sample_trials",
    "search_space",
    "select_trial",
    "trial_flags",
    "trial_name",
    "tuned_sides",
    "tuning_record",
]
