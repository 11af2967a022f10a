"""The search spaces are Optuna distributions over the documented ranges; a seeded study draws the same trials
again, prefix-stable; trials become the sides' flags."""

from __future__ import annotations

import math

import optuna
import pytest
from optuna.distributions import CategoricalDistribution, FloatDistribution

from compare.tune.sampling import make_sampler
from compare.tune.space import sample_trials, search_space, suggest, trial_flags, tuned_sides
from core import sides

# The ranges the hand-written distributions drew from before the search spaces became Optuna's (learning rates
# log-uniform, dropout uniform to two decimals), and each profile's training lengths.
RANGES = {
    "finetune": {"learning_rate": ("log", 2e-5, 2e-4), "max_steps": ("choice", (250, 500, 1000, 2000))},
    "scratch": {
        "learning_rate": ("log", 1e-4, 3e-3),
        "max_steps": ("choice", (500, 1000, 2000, 4000)),
        "dropout": ("uniform", 0.0, 0.3),
        "preset": ("choice", ("small", "base")),
    },
}
QUICK_LENGTHS = {"finetune": (250, 500, 1000), "scratch": (500, 1000, 2000)}


@pytest.mark.parametrize("side", tuned_sides())
def test_the_optuna_distributions_cover_the_same_ranges_as_before(side):
    space = search_space(side, "full")
    assert set(space) == set(RANGES[side])
    for name, (law, *bounds) in RANGES[side].items():
        distribution = space[name]
        if law == "choice":
            assert isinstance(distribution, CategoricalDistribution) and distribution.choices == bounds[0]
        else:
            assert isinstance(distribution, FloatDistribution)
            assert (distribution.low, distribution.high, distribution.log) == (*bounds, law == "log")
    assert search_space(side, "quick")["max_steps"].choices == QUICK_LENGTHS[side]
    assert search_space(side, "full")["dropout"].step == 0.01 if side == "scratch" else True


def test_a_seeded_study_draws_the_same_trials_again_in_any_process_order():
    space = search_space("scratch", "quick")
    first = sample_trials("scratch", 6, seed=9, profile="quick")
    # A stored study drawing the same trials one by one, as several processes would: trial i's parameters depend on
    # the seed and i alone.
    study = optuna.create_study(direction="maximize", sampler=make_sampler("random", 9))
    trials = [study.ask() for _ in range(6)]
    drawn = {trial.number: suggest(trial, space) for trial in reversed(trials)}
    assert [drawn[i] for i in range(6)] == first
    assert len({str(t) for t in first}) == 6  # independent draws, no two alike


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
        if isinstance(distribution, CategoricalDistribution):
            assert set(values) == set(distribution.choices)
        else:
            assert all(distribution.low <= v <= distribution.high for v in values)
            # 300 draws reach within a tenth of the range of each bound (a miss has chance 0.9**300).
            margin = (distribution.high - distribution.low) / 10
            assert min(values) < distribution.low + margin and max(values) > distribution.high - margin


def test_the_quick_profile_drops_the_longest_training_length_and_keeps_the_rest_of_the_space():
    for side in tuned_sides():
        full, quick = search_space(side, "full"), search_space(side, "quick")
        assert full == sides.get(side).search_space
        assert quick["max_steps"].choices == full["max_steps"].choices[:-1]
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


def test_a_misspelt_sampler_or_pruner_is_refused_with_the_known_ones():
    from core.studies import make_pruner

    with pytest.raises(ValueError, match="--tune-sampler takes random or tpe, not 'tpee'"):
        make_sampler("tpee", 0)
    with pytest.raises(ValueError, match="--tune-pruner takes median, hyperband, none, not 'mean'"):
        make_pruner("mean")
