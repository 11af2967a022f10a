"""Seeded random search per side (`compare run --tune N`), chosen on validation only."""

from compare.tune.selection import expected_max, select_trial, tuning_record
from compare.tune.space import SEARCH_SPACE, sample_trials, trial_flags, trial_name

__all__ = [
    "SEARCH_SPACE",
    "expected_max",
    "sample_trials",
    "select_trial",
    "trial_flags",
    "trial_name",
    "tuning_record",
]
