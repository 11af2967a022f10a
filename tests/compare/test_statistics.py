from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, confusion_matrix, f1_score

from compare.scoring.statistics import (
    StatisticsArguments,
    model_intervals,
    paired_comparison,
    paired_p_value,
    spread,
    verdict,
)
from core import kinds  # noqa: E402
from core.metrics import accuracy_and_macro_f1, confusion_counts  # noqa: E402


def test_confusion_and_scores_match_scikit_learn() -> None:
    rng = np.random.default_rng(0)
    gold = rng.integers(0, 3, (4, 50))
    pred = rng.integers(0, 3, (4, 50))
    confusion = confusion_counts(gold, pred, 3)
    accuracy, macro_f1 = accuracy_and_macro_f1(confusion)
    for r in range(4):
        np.testing.assert_array_equal(confusion[r], confusion_matrix(gold[r], pred[r], labels=[0, 1, 2]))
        assert accuracy[r] == pytest.approx(accuracy_score(gold[r], pred[r]))
        assert macro_f1[r] == pytest.approx(
            f1_score(gold[r], pred[r], labels=[0, 1, 2], average="macro", zero_division=0)
        )


def test_mcnemar_on_a_hand_worked_table() -> None:
    # 12 examples: both right on 5, only a right on 6, only b right on 1  ->  p = 2 * P(X <= 1), X ~ B(7, 1/2)
    gold = np.zeros(12, dtype=int)
    a = np.array([0] * 5 + [0] * 6 + [1])
    b = np.array([0] * 5 + [1] * 6 + [0])
    result = paired_comparison(gold, a, b, 2, StatisticsArguments(bootstrap_resamples=200))
    assert (result["mcnemar_b"], result["mcnemar_c"]) == (6, 1)
    assert result["mcnemar_p"] == pytest.approx(2 * (1 + 7) / 2**7)
    assert result["accuracy_diff"] == pytest.approx(5 / 12)


def independent_errors(rng: np.random.Generator, gold: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Model a right 85% of the time and model b 80%, each erring on its own examples."""
    a = np.where(rng.random(len(gold)) < 0.85, gold, 1 - gold)
    b = np.where(rng.random(len(gold)) < 0.80, gold, 1 - gold)
    return a, b


def correlated_errors(rng: np.random.Generator, gold: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The same accuracies (85%, 80%), but on 90% of the examples one difficulty decides both: there b is wrong
    wherever a is, and on 5% more."""
    difficulty = rng.random(len(gold))
    a_right = difficulty < 0.85
    b_right = np.where(rng.random(len(gold)) < 0.9, difficulty < 0.80, rng.random(len(gold)) < 0.80)
    return np.where(a_right, gold, 1 - gold), np.where(b_right, gold, 1 - gold)


@pytest.mark.parametrize("models", [independent_errors, correlated_errors])
def test_paired_bootstrap_interval_covers_the_true_difference_about_95_percent_of_the_time(models) -> None:
    """Over many synthetic test sets the 95% interval holds the true accuracy difference (0.05) neither much less
    nor much more often than 95% of the time: an interval that ignored the pairing would be too wide when the
    errors are correlated and cover nearly always."""
    covered, trials, n = 0, 150, 600
    for trial in range(trials):
        rng = np.random.default_rng(100 + trial)
        gold = rng.integers(0, 2, n)
        a, b = models(rng, gold)
        args = StatisticsArguments(bootstrap_resamples=400, bootstrap_seed=trial)
        lo, hi = paired_comparison(gold, a, b, 2, args)["accuracy_diff_ci"]
        covered += lo <= 0.05 <= hi
    assert 0.88 <= covered / trials <= 0.985


def test_with_correlated_errors_the_paired_interval_is_narrower_than_an_unpaired_one() -> None:
    rng = np.random.default_rng(7)
    gold = rng.integers(0, 2, 2000)
    a, b = correlated_errors(rng, gold)
    lo, hi = paired_comparison(gold, a, b, 2, StatisticsArguments(bootstrap_resamples=1000))["accuracy_diff_ci"]
    right_a, right_b = (a == gold).astype(float), (b == gold).astype(float)
    # Unpaired: each model's accuracy resampled over its own independent draw of the examples.
    draws = np.random.default_rng(8).integers(0, len(gold), size=(2, 1000, len(gold)))
    unpaired = np.percentile(right_a[draws[0]].mean(1) - right_b[draws[1]].mean(1), [2.5, 97.5])
    assert hi - lo < 0.75 * (unpaired[1] - unpaired[0])
    # Both widths agree with their normal approximations: 2 x 1.96 standard errors of the difference.
    paired_se = np.std(right_a - right_b) / np.sqrt(len(gold))
    unpaired_se = np.sqrt(right_a.var() / len(gold) + right_b.var() / len(gold))
    assert hi - lo == pytest.approx(2 * 1.96 * paired_se, rel=0.15)
    assert unpaired[1] - unpaired[0] == pytest.approx(2 * 1.96 * unpaired_se, rel=0.15)
    assert lo < (right_a - right_b).mean() < hi


def test_model_interval_brackets_the_point_estimate_and_narrows_with_more_data() -> None:
    rng = np.random.default_rng(1)
    widths = []
    for n in (200, 5000):
        gold = rng.integers(0, 2, n)
        pred = np.where(rng.random(n) < 0.7, gold, 1 - gold)
        ci = model_intervals(gold, pred, 2, StatisticsArguments(bootstrap_resamples=300))
        assert ci["accuracy_ci"][0] < accuracy_score(gold, pred) < ci["accuracy_ci"][1]
        widths.append(ci["accuracy_ci"][1] - ci["accuracy_ci"][0])
    assert widths[1] < widths[0] / 3


def test_verdict_names_a_winner_only_when_the_interval_excludes_zero() -> None:
    clear = {"accuracy_diff": -0.04, "accuracy_diff_ci": [-0.06, -0.02], "mcnemar_p": 0.001}
    assert verdict("finetune", "scratch", clear)[0] == "scratch"
    close = {"accuracy_diff": 0.01, "accuracy_diff_ci": [-0.005, 0.03], "mcnemar_p": 0.2}
    winner, sentence = verdict("finetune", "scratch", close)
    assert winner is None and sentence.startswith("No clear winner")


def test_verdict_with_seeds_needs_every_seed_to_agree() -> None:
    clear = {"accuracy_diff": 0.04, "accuracy_diff_ci": [0.02, 0.06], "mcnemar_p": 0.001}
    assert verdict("a", "b", clear, [0.03, 0.05, 0.04])[0] == "a"
    winner, sentence = verdict("a", "b", clear, [0.03, -0.01, 0.04])
    assert winner is None and "1 of 3 training seeds" in sentence


def test_spread_is_the_mean_and_sample_standard_deviation() -> None:
    assert spread([0.8, 0.9]) == pytest.approx({"mean": 0.85, "std": np.std([0.8, 0.9], ddof=1)})
    assert spread([0.7]) == {"mean": 0.7, "std": 0.0}


def test_settings_are_validated() -> None:
    with pytest.raises(ValueError, match="at least 100, got 5"):
        StatisticsArguments(bootstrap_resamples=5)


def test_the_paired_bootstrap_p_value_on_a_hand_worked_case() -> None:
    # 9 resampled differences, 2 at or below 0 and 7 at or above: p = 2 * (2 + 1) / (9 + 1)
    diffs = np.array([0.03, -0.01, 0.02, 0.0, 0.05, 0.01, 0.04, 0.02, 0.03])
    assert paired_p_value(diffs) == pytest.approx(0.6)
    assert paired_p_value(-diffs) == pytest.approx(0.6)  # two-sided: the sign of the difference does not matter
    assert paired_p_value(np.full(99, 0.02)) == pytest.approx(2 / 100)  # never at or below 0: the floor, 2 / (R + 1)
    assert paired_p_value(np.zeros(50)) == 1.0


@pytest.mark.parametrize("mean", [0.0, 0.01, 0.02, 0.03])
def test_the_paired_bootstrap_p_value_of_a_normal_difference_is_the_two_sided_normal_p(mean: float) -> None:
    """Differences spread normally about `mean` with sd 0.01: the share of them beyond 0 on the losing side is
    Phi(-|mean| / sd), so the p-value is twice that."""
    from scipy.stats import norm

    diffs = np.random.default_rng(3).normal(mean, 0.01, 40_000)
    assert paired_p_value(diffs) == pytest.approx(min(1.0, 2 * norm.cdf(-abs(mean) / 0.01)), abs=0.01)


def test_regression_and_multilabel_comparisons_use_the_paired_bootstrap_p_value() -> None:
    from scipy.stats import spearmanr

    rng = np.random.default_rng(4)
    gold = rng.normal(size=400)
    a, b = gold + rng.normal(0, 0.5, 400), gold + rng.normal(0, 1.5, 400)
    args = StatisticsArguments(bootstrap_resamples=300)
    result = paired_comparison(gold, a, b, 0, args, kinds.get("regression"))
    assert result["spearman_diff"] == pytest.approx(spearmanr(gold, a).statistic - spearmanr(gold, b).statistic)
    assert "mcnemar_p" not in result and result["bootstrap_p"] == pytest.approx(2 / 301)  # a is better every time
    same = paired_comparison(gold, a, a, 0, args, kinds.get("regression"))
    assert same["bootstrap_p"] == 1.0 and verdict("a", "b", same, metric="spearman")[0] is None
    labels = rng.integers(0, 2, (300, 4))
    noisy = np.where(rng.random((300, 4)) < 0.9, labels, 1 - labels)
    result = paired_comparison(labels, labels, noisy, 4, args, kinds.get("multi_label_classification"))
    assert result["macro_f1_diff"] == pytest.approx(1 - f1_score(labels, noisy, average="macro"))
    assert result["micro_f1_diff"] == pytest.approx(1 - f1_score(labels, noisy, average="micro"))
    assert result["bootstrap_p"] == pytest.approx(2 / 301)
    winner, sentence = verdict("a", "b", result, metric="macro_f1")
    assert winner == "a" and "points of macro-F1" in sentence and "paired bootstrap p = 0.00664" in sentence
