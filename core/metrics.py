"""The classification metrics every part of the suite reports, defined once.

`run.json`'s `validation` scores, compare's `evaluate` modules and its bootstrap intervals all count
through these functions, so `macro_f1` means the same thing everywhere: the unweighted mean of per-class
F1 over every label of the task, a class that is neither present nor predicted counting as F1 0
(scikit-learn's `f1_score(..., labels=range(K), average="macro", zero_division=0)`).

Examples:
    >>> scores = classification_scores(np.array([0, 1, 1, 1]), np.array([0, 0, 1, 1]), num_labels=3)
    >>> round(scores["accuracy"], 4), round(scores["macro_f1"], 4)
    (0.75, 0.4889)
"""

from __future__ import annotations

import numpy as np


def confusion_counts(gold: np.ndarray, pred: np.ndarray, num_labels: int) -> np.ndarray:
    """Confusion matrices (rows gold, columns predicted) of each row of `gold`/`pred`, shape (R, K, K).

    One-dimensional `gold` and `pred` give one matrix, shape (1, K, K).
    """
    gold, pred = np.atleast_2d(np.asarray(gold, np.int64)), np.atleast_2d(np.asarray(pred, np.int64))  # (R, n)
    rows = gold.shape[0]
    codes = (np.arange(rows)[:, None] * num_labels + gold) * num_labels + pred  # (R, n)
    counts = np.bincount(codes.ravel(), minlength=rows * num_labels * num_labels)
    return counts.reshape(rows, num_labels, num_labels)


def per_class(confusion: np.ndarray) -> dict[str, np.ndarray]:
    """Precision, recall, F1 and support per class of (R, K, K) confusions, each (R, K).

    A class never predicted has precision 0, one never present has recall 0, and F1 is 0 when both are.
    """
    tp = np.diagonal(confusion, axis1=-2, axis2=-1).astype(float)  # (R, K)
    predicted, actual = confusion.sum(axis=-2).astype(float), confusion.sum(axis=-1).astype(float)  # (R, K)
    return {
        "precision": _divide(tp, predicted),
        "recall": _divide(tp, actual),
        "f1": _divide(2 * tp, predicted + actual),
        "support": actual.astype(np.int64),
    }


def accuracy_and_macro_f1(confusion: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Accuracy and macro-F1 of (R, K, K) confusions, each of shape (R,)."""
    tp = np.diagonal(confusion, axis1=-2, axis2=-1).sum(axis=-1)  # (R,)
    total = confusion.sum(axis=(-2, -1))
    return _divide(tp.astype(float), total.astype(float)), per_class(confusion)["f1"].mean(axis=-1)


def classification_scores(gold: np.ndarray, pred: np.ndarray, num_labels: int) -> dict[str, float]:
    """`{"accuracy", "macro_f1"}` of one set of predictions over the task's `num_labels` classes."""
    accuracy, macro_f1 = accuracy_and_macro_f1(confusion_counts(gold, pred, num_labels))
    return {"accuracy": float(accuracy[0]), "macro_f1": float(macro_f1[0])}


def _divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    return np.divide(numerator, denominator, out=np.zeros_like(numerator, dtype=float), where=denominator > 0)
