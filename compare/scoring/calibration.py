"""Whether a model's probabilities mean what they say: expected calibration error, log loss, reliability bins.

Confidence is the probability of the predicted class. Bins are equal-width over [0, 1]; a confidence of
exactly 1 falls in the last bin.
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
