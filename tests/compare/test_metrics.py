from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest
from sklearn.metrics import accuracy_score, matthews_corrcoef, precision_recall_fscore_support

from compare.scoring.metrics import load_metric


def random_labels(seed: int, n: int = 300, k: int = 4) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, k, n)
    pred = np.where(rng.random(n) < 0.6, gold, rng.integers(0, k, n))
    return gold, pred


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_accuracy_and_mcc_match_scikit_learn(seed: int) -> None:
    gold, pred = random_labels(seed)
    assert load_metric("accuracy").compute(predictions=pred, references=gold)["accuracy"] == pytest.approx(
        accuracy_score(gold, pred)
    )
    mcc = load_metric("matthews_correlation").compute(predictions=pred, references=gold)["matthews_correlation"]
    assert mcc == pytest.approx(matthews_corrcoef(gold, pred))


@pytest.mark.parametrize("seed", [0, 1])
def test_precision_recall_f1_match_scikit_learn(seed: int) -> None:
    gold, pred = random_labels(seed, k=5)
    pred[pred == 4] = 3  # class 4 is never predicted: its precision is 0 by convention
    labels = list(range(5))
    result = load_metric("precision_recall_f1").compute(predictions=pred, references=gold, labels=labels)
    p, r, f, s = precision_recall_fscore_support(gold, pred, labels=labels, zero_division=0)
    np.testing.assert_allclose(result["precision"], p)
    np.testing.assert_allclose(result["recall"], r)
    np.testing.assert_allclose(result["f1"], f)
    assert result["support"] == s.tolist()
    for average in ("macro", "weighted"):
        p, r, f, _ = precision_recall_fscore_support(gold, pred, labels=labels, average=average, zero_division=0)
        assert result[f"{average}_precision"] == pytest.approx(p)
        assert result[f"{average}_recall"] == pytest.approx(r)
        assert result[f"{average}_f1"] == pytest.approx(f)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_mcnemar_matches_an_exact_binomial_test_on_the_discordant_pairs(seed: int) -> None:
    gold, first = random_labels(seed, n=200, k=2)
    _, second = random_labels(seed + 10, n=200, k=2)
    result = load_metric("mcnemar").compute(predictions1=first, predictions2=second, references=gold)
    b = int(((first == gold) & (second != gold)).sum())
    c = int(((first != gold) & (second == gold)).sum())
    assert (result["b"], result["c"]) == (b, c)
    assert result["p_value"] == pytest.approx(binomtest(b, b + c, 0.5).pvalue)


def test_unknown_metric_is_refused() -> None:
    with pytest.raises(ValueError, match="Unknown metric 'bleu'"):
        load_metric("bleu")


def test_the_multilabel_module_equals_scikit_learn():
    from sklearn.metrics import f1_score, hamming_loss

    rng = np.random.default_rng(3)
    gold = (rng.random((30, 4)) < 0.4).astype(int)
    pred = np.where(rng.random((30, 4)) < 0.75, gold, 1 - gold)
    result = load_metric("multilabel").compute(predictions=pred.tolist(), references=gold.tolist())
    assert result["micro_f1"] == pytest.approx(f1_score(gold, pred, average="micro"))
    assert result["macro_f1"] == pytest.approx(f1_score(gold, pred, average="macro"))
    assert result["hamming_loss"] == pytest.approx(hamming_loss(gold, pred))


def test_the_regression_module_equals_scipy():
    from scipy.stats import pearsonr, spearmanr

    rng = np.random.default_rng(4)
    gold = rng.random(40) * 5
    pred = gold + rng.normal(0, 1, 40)
    result = load_metric("regression").compute(predictions=pred.tolist(), references=gold.tolist())
    assert result["pearson"] == pytest.approx(pearsonr(gold, pred).statistic)
    assert result["spearman"] == pytest.approx(spearmanr(gold, pred).statistic)
    assert result["mae"] == pytest.approx(np.abs(gold - pred).mean())
