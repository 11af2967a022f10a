import numpy as np
import pytest
from sklearn.metrics import accuracy_score, f1_score, precision_recall_fscore_support

from core.metrics import accuracy_and_macro_f1, classification_scores, confusion_counts, per_class


@pytest.mark.parametrize("seed", range(5))
def test_scores_match_scikit_learn_with_every_label_counted(seed):
    rng = np.random.default_rng(seed)
    num_labels = 5
    gold = rng.integers(0, num_labels - 1, size=60)  # the last class never occurs in gold
    pred = rng.integers(0, num_labels, size=60)
    labels = list(range(num_labels))
    scores = classification_scores(gold, pred, num_labels)
    assert scores["accuracy"] == pytest.approx(accuracy_score(gold, pred))
    assert scores["macro_f1"] == pytest.approx(f1_score(gold, pred, labels=labels, average="macro", zero_division=0))
    precision, recall, f1, support = precision_recall_fscore_support(gold, pred, labels=labels, zero_division=0)
    counts = per_class(confusion_counts(gold, pred, num_labels))
    np.testing.assert_allclose(counts["precision"][0], precision)
    np.testing.assert_allclose(counts["recall"][0], recall)
    np.testing.assert_allclose(counts["f1"][0], f1)
    np.testing.assert_array_equal(counts["support"][0], support)


def test_a_class_absent_from_gold_and_predictions_counts_as_zero():
    # Two of three classes perfectly right: macro-F1 over the task's three labels is 2/3, not 1.
    scores = classification_scores(np.array([0, 1, 0, 1]), np.array([0, 1, 0, 1]), num_labels=3)
    assert scores == {"accuracy": 1.0, "macro_f1": pytest.approx(2 / 3)}


def test_batched_confusions_score_each_row():
    gold = np.array([[0, 1, 1], [1, 1, 0]])
    pred = np.array([[0, 1, 0], [1, 1, 0]])
    accuracy, macro_f1 = accuracy_and_macro_f1(confusion_counts(gold, pred, 2))
    np.testing.assert_allclose(accuracy, [2 / 3, 1.0])
    np.testing.assert_allclose(macro_f1, [f1_score(gold[0], pred[0], average="macro"), 1.0])
