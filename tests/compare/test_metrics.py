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


def test_the_multilabel_references_learn_what_a_word_decides():
    from compare.scoring.baselines import no_labels, tfidf_one_vs_rest

    words = ["good", "bad", "calm", "angry", "fine", "sad"]
    rng = np.random.default_rng(5)
    texts = [" ".join(rng.choice(words, 4)) for _ in range(160)]
    gold = np.array([["good" in t, "angry" in t, "sad" in t] for t in texts], dtype=int)
    splits = [(texts[a:b], None, gold[a:b]) for a, b in ((0, 100), (100, 130), (130, 160))]
    assert no_labels(gold[130:]) == {
        "micro_f1": 0.0,
        "macro_f1": 0.0,
        "per_label_f1": [0.0, 0.0, 0.0],
        "subset_accuracy": float((gold[130:].sum(axis=1) == 0).mean()),
        "hamming_loss": float(gold[130:].mean()),
    }
    assert tfidf_one_vs_rest(*splits)["macro_f1"] > 0.9  # each label is one word: a linear model finds it


def test_the_regression_references_on_a_similarity_task():
    from scipy.stats import spearmanr

    from compare.scoring.baselines import tfidf_cosine, tfidf_ridge, train_mean

    words = ["good", "bad", "calm", "angry", "fine", "sad", "tall", "small"]
    rng = np.random.default_rng(6)
    a = [" ".join(rng.choice(words, 3, replace=False)) for _ in range(200)]
    b = [" ".join(rng.choice(words, 3, replace=False)) for _ in range(200)]
    overlap = np.array([len(set(x.split()) & set(y.split())) for x, y in zip(a, b, strict=True)], dtype=float)
    train, test = (a[:150], b[:150], overlap[:150]), (a[150:], b[150:], overlap[150:])
    assert train_mean(overlap[:150], overlap[150:])["mse"] == pytest.approx(
        np.var(overlap[150:]) + (overlap[150:].mean() - overlap[:150].mean()) ** 2
    )
    cosine = tfidf_cosine(train, test)
    assert cosine["spearman"] == pytest.approx(
        spearmanr(overlap[150:], cosine_values(a[150:], b[150:], a[:150] + b[:150])).statistic
    )
    assert cosine["spearman"] > 0.8
    positive = np.array([t.split().count("good") + t.split().count("fine") for t in a], dtype=float)
    ridge = tfidf_ridge((a[:150], None, positive[:150]), (a[150:], None, positive[150:]))
    assert ridge["spearman"] > 0.9  # the value is a count of two words: a linear model finds it


def cosine_values(first: list[str], second: list[str], corpus: list[str]) -> np.ndarray:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.metrics.pairwise import cosine_similarity

    vectorizer = TfidfVectorizer(sublinear_tf=True).fit(corpus)
    return np.diag(cosine_similarity(vectorizer.transform(first), vectorizer.transform(second)))
