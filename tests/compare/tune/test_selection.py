"""Expected maximum of n trials against enumeration and simulation; selection by validation only."""

from __future__ import annotations

import inspect
import itertools

import numpy as np
import pytest

from compare.tune.selection import expected_max, select_trial, tuning_record


def test_expected_max_by_hand():
    # Sorted 0.1, 0.2, 0.3. n=1: the mean, 0.2. n=2: of the 9 ordered pairs, 1 has max 0.1, 3 have 0.2 and
    # 5 have 0.3, so (0.1 + 0.6 + 1.5) / 9. n=3: 1, 7 and 19 of the 27 triples, (0.1 + 1.4 + 5.7) / 27.
    assert expected_max([0.3, 0.1, 0.2]) == pytest.approx([0.2, 2.2 / 9, 7.2 / 27])


def test_expected_max_equals_the_average_over_every_draw_with_ties():
    values = [0.7, 0.5, 0.7, 0.6, 0.55]
    exhaustive = [
        np.mean([max(draw) for draw in itertools.product(values, repeat=n)]) for n in range(1, len(values) + 1)
    ]
    assert expected_max(values) == pytest.approx(exhaustive)


def test_expected_max_agrees_with_a_monte_carlo_estimate():
    rng = np.random.default_rng(0)
    values = rng.uniform(0.6, 0.9, size=8)
    draws = 100_000
    exact = expected_max(values)
    for n in range(1, len(values) + 1):
        maxima = rng.choice(values, size=(draws, n)).max(axis=1)
        # The estimate's standard error is std / sqrt(draws); 4 of them bound a seeded estimate's miss
        # with room to spare (a 6e-5 chance per n if the formula were right and the seed unlucky).
        standard_error = maxima.std(ddof=1) / np.sqrt(draws)
        assert abs(maxima.mean() - exact[n - 1]) < 4 * standard_error


def test_expected_max_starts_at_the_mean_rises_and_ends_below_the_best():
    values = [0.81, 0.77, 0.86, 0.79]
    curve = expected_max(values)
    assert curve[0] == pytest.approx(np.mean(values))
    assert all(a <= b for a, b in zip(curve, curve[1:]))
    assert curve[-1] < max(values)
    assert expected_max([0.8]) == [0.8]


def test_expected_max_refuses_no_values_and_non_finite_ones():
    with pytest.raises(ValueError, match="at least one finished trial"):
        expected_max([])
    with pytest.raises(ValueError, match="trial 1 has validation score nan"):
        expected_max([0.8, float("nan")])


def test_selection_takes_the_best_validation_and_breaks_ties_by_trial_index():
    assert select_trial([0.70, 0.82, 0.79]) == 1
    assert select_trial([0.70, 0.82, 0.82, 0.81]) == 1
    with pytest.raises(ValueError, match="at least one finished trial"):
        select_trial([])


def test_selection_never_sees_test_scores():
    assert list(inspect.signature(select_trial).parameters) == ["validation_scores"]
    # Trial 2 has the best test accuracy, trial 0 the best validation accuracy: trial 0 is chosen.
    trials = [
        {"params": {"learning_rate": 3e-5}, "validation_accuracy": 0.88, "test_accuracy": 0.84, "run": "t0"},
        {"params": {"learning_rate": 1e-4}, "validation_accuracy": 0.86, "test_accuracy": 0.85, "run": "t1"},
        {"params": {"learning_rate": 2e-4}, "validation_accuracy": 0.87, "test_accuracy": 0.90, "run": "t2"},
    ]
    record = tuning_record(trials)
    assert record["selected"] == 0
    assert [t["run"] for t in record["trials"]] == ["t0", "t1", "t2"]
    assert record["expected_max_validation"] == pytest.approx(expected_max([0.88, 0.86, 0.87]))


def test_a_pruned_trial_is_never_chosen_and_stays_out_of_the_expected_best():
    trials = [
        {"state": "pruned", "params": {"max_steps": 1000}, "steps": 250, "validation_accuracy": 0.95, "run": "t0"},
        {"state": "complete", "params": {"max_steps": 500}, "steps": 500, "validation_accuracy": 0.81, "run": "t1"},
        {"state": "complete", "params": {"max_steps": 2000}, "steps": 900, "validation_accuracy": 0.84, "run": "t2"},
    ]
    record = tuning_record(trials)
    assert record["selected"] == 2 and record["pruned"] == 1 and record["saved_steps"] == 750
    assert record["expected_max_validation"] == pytest.approx(expected_max([0.81, 0.84]))
    assert tuning_record(trials, expected=False)["expected_max_validation"] is None  # TPE: no independent draws
    assert tuning_record(trials[:1])["selected"] is None  # nothing completed, nothing to choose
