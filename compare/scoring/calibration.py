"""Whether a model's probabilities mean what they say: expected calibration error, log loss, reliability bins.

Confidence is the probability of the predicted class. Bins are equal-width over [0, 1]; a confidence of
exactly 1 falls in the last bin. A multi-label model's labels are calibrated each on its own (`label_calibration`):
a label's probability is a yes/no prediction, [1 - p, p]. A regression model gives values, not probabilities, so
nothing here applies to it.
"""

from __future__ import annotations

import numpy as np

EPSILON = 1e-15  # probabilities are clipped here so that log loss stays finite


def reliability(probs: np.ndarray, gold: np.ndarray, bins: int) -> list[dict]:
    """Per confidence bin: its edges, example count, mean confidence and accuracy (None when empty)."""
    confidence = probs.max(axis=1)
    correct = probs.argmax(axis=1) == gold
    which = np.minimum((confidence * bins).astype(int), bins - 1)
    table = []
    for b in range(bins):
        members = which == b
        count = int(members.sum())
        table.append(
            {
                "lo": b / bins,
                "hi": (b + 1) / bins,
                "count": count,
                "confidence": float(confidence[members].mean()) if count else None,
                "accuracy": float(correct[members].mean()) if count else None,
            }
        )
    return table


def expected_calibration_error(probs: np.ndarray, gold: np.ndarray, bins: int) -> float:
    """Sum over bins of (bin share of examples) x |bin accuracy - bin mean confidence|."""
    n = len(gold)
    return float(
        sum(
            row["count"] / n * abs(row["accuracy"] - row["confidence"])
            for row in reliability(probs, gold, bins)
            if row["count"]
        )
    )


def log_loss(probs: np.ndarray, gold: np.ndarray) -> float:
    """Mean negative log probability of the gold class."""
    picked = np.clip(probs[np.arange(len(gold)), gold], EPSILON, 1.0)
    return float(-np.log(picked).mean())


def yes_no(probs: np.ndarray) -> np.ndarray:
    """Independent label probabilities (any shape) as two-class rows (m, 2): [absent, present], flattened."""
    present = np.asarray(probs, dtype=float).ravel()
    return np.stack([1 - present, present], axis=1)


def label_calibration(probs: np.ndarray, gold: np.ndarray, bins: int) -> dict:
    """Calibration of multi-label probabilities (n, L) against 0/1 gold (n, L): each label read as a yes/no
    prediction of its own probability.

    Returns:
        `ece_per_label` [L], `ece` (their mean), `log_loss` (mean binary log loss over every example and label)
        and `reliability` (the bins of every example's every label together).
    """
    gold = np.asarray(gold, np.int64)
    per_label = [expected_calibration_error(yes_no(probs[:, k]), gold[:, k], bins) for k in range(gold.shape[1])]
    return {
        "ece": float(np.mean(per_label)) if per_label else 0.0,
        "ece_per_label": per_label,
        "log_loss": log_loss(yes_no(probs), gold.ravel()),
        "reliability": reliability(yes_no(probs), gold.ravel(), bins),
    }
