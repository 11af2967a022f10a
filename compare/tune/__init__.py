"""Tuning on Optuna (`compare run --tune N`): the sides' search spaces, the studies several processes share, and the
choice on validation only."""

from compare.tune.selection import expected_max, select_trial, tuning_record
from compare.tune.space import sample_trials, search_space, suggest, trial_flags, trial_name, tuned_sides

__all__ = [
    "expected_max",
    "sample_trials",
    "search_space",
    "select_trial",
    "suggest",
    "trial_flags",
    "trial_name",
    "tuned_sides",
    "tuning_record",
]
