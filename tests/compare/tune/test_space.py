"""Trials are seeded, prefix-stable, inside the documented space, and become the sides' flags."""

from __future__ import annotations

import math

import pytest

from compare.tune.space import sample_trials, search_space, trial_flags, tuned_sides
from core import sides
from core.distributions import Choice, LogUniform, Uniform


@pytest.mark.parametrize("side", tuned_sides())
def test_trials_are_seeded_and_a_larger_n_keeps_the_first_ones(side):
    assert sample_trials(side, 5, seed=7) == sample_trials(side, 5, seed=7)
    assert sample_trials(side, 12, seed=7)[:5] == sample_trials(side, 5, seed=7)
    assert sample_trials(side, 5, seed=8) != sample_trials(side, 5, seed=7)


@pytest.mark.parametrize("profile", sides.PROFILES)
@pytest.mark.parametrize("side", tuned_sides())
def test_every_value_lies_in_its_distribution_and_every_choice_is_drawn(side, profile):
    trials = sample_trials(side, 300, seed=0, profile=profile)
    for name, distribution in search_space(side, profile).items():
        values = [trial[name] for trial in trials]
        if isinstance(distribution, Choice):
            assert set(values) == set(distribution.values)
        else:
            assert all(distribution.low <= v <= distribution.high for v in values)
            # 300 draws reach within a tenth of the range of each bound (a miss has chance 0.9**300).
            margin = (distribution.high - distribution.low) / 10
            assert min(values) < distribution.low + margin and max(values) > distribution.high - margin


def test_the_quick_profile_drops_the_longest_training_length_and_keeps_the_rest_of_the_space():
    for side in tuned_sides():
        full, quick = search_space(side, "full"), search_space(side, "quick")
        assert full == sides.get(side).search_space
        assert quick["max_steps"].values == full["max_steps"].values[:-1]
        assert {name: d for name, d in quick.items() if name != "max_steps"} == {
            name: d for name, d in full.items() if name != "max_steps"
        }
        # Same generators: the quick trials differ from the full ones only in the training length drawn.
        for a, b in zip(sample_trials(side, 20, seed=5), sample_trials(side, 20, seed=5, profile="quick")):
            assert {k: v for k, v in a.items() if k != "max_steps"} == {k: v for k, v in b.items() if k != "max_steps"}


def test_an_unknown_profile_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match="'slow': training lengths are set for full, quick"):
        sample_trials("scratch", 3, seed=0, profile="slow")


def test_learning_rates_are_log_uniform():
    # Under a log-uniform law half the draws fall below the geometric mean of the bounds; under a uniform
    # law on [2e-5, 2e-4] only (sqrt(4e-9) - 2e-5) / 1.8e-4 = 24% would. With 1,000 draws the binomial
    # standard deviation of the share is 1.6 points, so 0.44..0.56 is a band of nearly 4 deviations.
    space = search_space("finetune")["learning_rate"]
    middle = math.sqrt(space.low * space.high)
    rates = [trial["learning_rate"] for trial in sample_trials("finetune", 1000, seed=1)]
    assert 0.44 < sum(rate < middle for rate in rates) / len(rates) < 0.56


def test_recorded_values_are_exactly_what_the_flags_say():
    for trial in sample_trials("scratch", 50, seed=3):
        flags = trial_flags(trial)
        given = dict(zip(flags[::2], flags[1::2]))
        assert float(given["--learning-rate"]) == trial["learning_rate"]
        assert float(given["--dropout"]) == trial["dropout"]
        assert int(given["--max-steps"]) == trial["max_steps"]
        assert given["--preset"] == trial["preset"]


def test_trial_flags_spell_each_parameter_as_its_flag():
    params = {"learning_rate": 3e-05, "max_steps": 800, "dropout": 0.15, "preset": "base"}
    assert trial_flags(params) == [
        "--learning-rate",
        "3e-05",
        "--max-steps",
        "800",
        "--dropout",
        "0.15",
        "--preset",
        "base",
    ]


@pytest.mark.parametrize("n", [0, -3])
def test_a_non_positive_number_of_trials_is_refused(n):
    with pytest.raises(ValueError, match=rf"positive integer \(--tune N with N >= 1\); got {n}"):
        sample_trials("scratch", n, seed=0)


def test_an_unknown_side_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match="'distilled': the search space covers finetune, scratch"):
        sample_trials("distilled", 3, seed=0)


def test_bad_distributions_are_refused():
    with pytest.raises(ValueError, match="0 < low < high"):
        LogUniform(0.0, 1e-3)
    with pytest.raises(ValueError, match="low < high"):
        Uniform(0.3, 0.1)
    with pytest.raises(ValueError, match="at least one value"):
        Choice(())
