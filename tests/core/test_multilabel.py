import itertools

import numpy as np
import pytest
from sklearn.metrics import f1_score, hamming_loss

from core.multilabel import FALLBACK_THRESHOLD, choose_thresholds, multilabel_scores, predict


def brute_force_threshold(probs: np.ndarray, gold: np.ndarray) -> float:
    """The highest candidate threshold with the best F1, by trying every distinct probability."""
    best = max(
        sorted(set(probs.tolist()), reverse=True),
        key=lambda t: f1_score(gold, (probs >= t).astype(int), zero_division=0),
    )
    return float(best)


def test_the_threshold_of_a_hand_worked_case_maximises_f1():
    # label 0: positives at 0.8, 0.4, 0.35; negatives at 0.7, 0.5, 0.1.
    # cut 0.8: F1 2/4 = 0.5; 0.7: 2/5 = 0.4; 0.5: 2/6; 0.4: 4/7 = 0.571; 0.35: 6/8 = 0.75; 0.1: 6/9.
    probs = np.array([[0.8], [0.7], [0.5], [0.4], [0.35], [0.1]])
    gold = np.array([[1], [0], [0], [1], [1], [0]])
    assert choose_thresholds(probs, gold).tolist() == [0.35]
    assert f1_score(gold[:, 0], predict(probs, np.array([0.35]))[:, 0]) == pytest.approx(0.75)


def test_thresholds_equal_a_brute_force_search_and_absent_labels_fall_back():
    rng = np.random.default_rng(0)
    probs = np.round(rng.random((60, 4)), 2)  # rounded: ties between probabilities occur
    gold = (rng.random((60, 4)) < probs).astype(int)
    gold[:, 3] = 0
    thresholds = choose_thresholds(probs, gold)
    for k in range(3):
        assert thresholds[k] == pytest.approx(brute_force_threshold(probs[:, k], gold[:, k]))
        best = f1_score(gold[:, k], predict(probs, thresholds)[:, k], zero_division=0)
        assert all(best >= f1_score(gold[:, k], (probs[:, k] >= t).astype(int), zero_division=0) for t in probs[:, k])
    assert thresholds[3] == FALLBACK_THRESHOLD


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_multilabel_scores_equal_scikit_learn(seed):
    rng = np.random.default_rng(seed)
    gold = (rng.random((40, 5)) < 0.3).astype(int)
    pred = np.where(rng.random((40, 5)) < 0.8, gold, 1 - gold)
    gold[:, 4] = pred[:, 4] = 0  # a label neither present nor predicted counts as F1 0, as zero_division=0
    scores = multilabel_scores(gold, pred)
    assert scores["micro_f1"] == pytest.approx(f1_score(gold, pred, average="micro", zero_division=0))
    assert scores["macro_f1"] == pytest.approx(f1_score(gold, pred, average="macro", zero_division=0))
    assert scores["per_label_f1"] == pytest.approx(list(f1_score(gold, pred, average=None, zero_division=0)))
    assert scores["hamming_loss"] == pytest.approx(hamming_loss(gold, pred))
    exact = np.mean([list(a) == list(b) for a, b in zip(gold.tolist(), pred.tolist(), strict=True)])
    assert scores["subset_accuracy"] == pytest.approx(exact)


def test_every_decision_pattern_of_two_labels_scores_as_scikit_learn():
    rows = list(itertools.product([0, 1], repeat=2))
    gold = np.array([a for a in rows for _ in rows])
    pred = np.array([b for _ in rows for b in rows])
    assert multilabel_scores(gold, pred)["macro_f1"] == pytest.approx(f1_score(gold, pred, average="macro"))
