"""Multi-label decisions defined once: per-label F1 counts and the decision threshold chosen on validation.

A multi-label model gives each label an independent probability; a label is predicted when its probability is
at least the label's threshold. The thresholds are chosen on the validation split, one per label, each the cut
that maximises that label's F1 there (scikit-learn's `f1_score(..., zero_division=0)` counting), and 0.5 where a
label never occurs in validation. Runs record them in run.json (`docs/formats.md`) and predict with them.

Examples:
    >>> probs = np.array([[0.9, 0.2], [0.6, 0.4], [0.3, 0.1], [0.2, 0.3]])
    >>> gold = np.array([[1, 0], [1, 0], [0, 0], [1, 0]])
    >>> choose_thresholds(probs, gold).tolist()  # label 0: all three positives at 0.2; label 1 absent
    [0.2, 0.5]
    >>> predict(probs, np.array([0.5, 0.35])).tolist()
    [[1, 0], [1, 1], [0, 0], [0, 0]]
"""

from __future__ import annotations

import numpy as np

FALLBACK_THRESHOLD = 0.5


def predict(probs: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """0/1 decisions (n, K): probability at least the label's threshold."""
    return (np.asarray(probs) >= np.asarray(thresholds)[None, :]).astype(np.int64)


def choose_thresholds(probs: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """One threshold per label (K,), maximising each label's F1 on (probs, gold), both (n, K).

    The candidates are the label's distinct probabilities: predicting every example at or above one of them.
    Among cuts of equal F1 the highest threshold wins (the fewest positives). A label with no positive example
    gets `FALLBACK_THRESHOLD`.
    """
    probs, gold = np.asarray(probs, np.float64), np.asarray(gold, np.int64)
    return np.array([_best_threshold(probs[:, k], gold[:, k]) for k in range(probs.shape[1])])


def _best_threshold(probs: np.ndarray, gold: np.ndarray) -> float:
    positives = int(gold.sum())
    if positives == 0:
        return FALLBACK_THRESHOLD
    order = np.argsort(-probs, kind="stable")
    sorted_probs, sorted_gold = probs[order], gold[order]  # (n,) each, highest probability first
    # cut after the last of each run of equal probabilities: predicting the top k examples
    last_of_run = np.append(sorted_probs[1:] != sorted_probs[:-1], True)
    predicted = np.arange(1, len(probs) + 1)[last_of_run]  # k at each cut
    true_positives = np.cumsum(sorted_gold)[last_of_run]
    f1 = 2 * true_positives / (predicted + positives)
    best = int(np.argmax(f1))  # the first maximum: the highest threshold
    return float(sorted_probs[last_of_run][best])


def label_counts(gold: np.ndarray, pred: np.ndarray) -> dict[str, np.ndarray]:
    """True positives, predicted and actual positives per label, each (K,), from 0/1 arrays (n, K)."""
    gold, pred = np.asarray(gold, np.int64), np.asarray(pred, np.int64)
    return {"tp": (gold * pred).sum(axis=0), "predicted": pred.sum(axis=0), "actual": gold.sum(axis=0)}


def multilabel_scores(gold: np.ndarray, pred: np.ndarray) -> dict:
    """Micro- and macro-F1, per-label F1, subset accuracy and Hamming loss of 0/1 arrays (n, K).

    F1 is 0 for a label neither present nor predicted, as `core.metrics` counts single-label classes.
    """
    gold, pred = np.asarray(gold, np.int64), np.asarray(pred, np.int64)
    counts = label_counts(gold, pred)
    per_label = _divide(2 * counts["tp"], counts["predicted"] + counts["actual"])
    micro = _divide(2 * counts["tp"].sum(), counts["predicted"].sum() + counts["actual"].sum())
    return {
        "micro_f1": float(micro),
        "macro_f1": float(per_label.mean()) if per_label.size else 0.0,
        "per_label_f1": [float(v) for v in per_label],
        "subset_accuracy": float((gold == pred).all(axis=1).mean()) if len(gold) else 0.0,
        "hamming_loss": float((gold != pred).mean()) if gold.size else 0.0,
    }


def _divide(numerator, denominator):
    numerator, denominator = np.asarray(numerator, float), np.asarray(denominator, float)
    return np.divide(numerator, denominator, out=np.zeros_like(numerator), where=denominator > 0)
