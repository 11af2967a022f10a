"""Whether a model's probabilities mean what they say: expected calibration error, log loss, reliability bins.

Confidence is the probability of the predicted class. Bins are equal-width over [0, 1]; a confidence of
exactly 1 falls in the last bin. A multi-label model's labels are calibrated each on its own (`label_calibration`):
a label's probability is a yes/no prediction, [1 - p, p]. A regression model gives values, not probabilities, so
nothing here applies to it.

A run calibrated on validation (run.json `calibration`, `core.calibration`) is scored on its calibrated
probabilities, which `predict_proba` gives; `calibration_entries` adds the same model before calibration (the
probabilities at T = 1, recovered by the reciprocal temperatures), each ECE with a bootstrap interval over the
examples (`ece_samples`), for results.json `ece_uncalibrated` and the second reliability diagram.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from compare.kinds import reported
from core.kinds import Kind

EPSILON = 1e-15  # probabilities are clipped here so that log loss stays finite


def reliability(probs: np.ndarray, gold: np.ndarray, bins: int) -> list[dict]:
    """Per confidence bin: its edges, example count, mean confidence and accuracy (None when empty)."""
    return reliability_of(probs.max(axis=1), probs.argmax(axis=1) == gold, bins)


def bin_of(confidence: np.ndarray, bins: int) -> np.ndarray:
    """Each confidence's equal-width bin, a confidence of exactly 1 in the last."""
    return np.minimum((confidence * bins).astype(int), bins - 1)


def reliability_of(confidence: np.ndarray, correct: np.ndarray, bins: int) -> list[dict]:
    """`reliability` of confidences (m,) and whether each decision was right (m,)."""
    which = bin_of(confidence, bins)
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


def ece_samples(confidence: np.ndarray, correct: np.ndarray, bins: int, idx: np.ndarray) -> np.ndarray:
    """The ECE on each bootstrap resample of the examples, `idx` (R, n): with decisions (n, m) (m = 1 for a single
    label, one column per label for multi-label), the mean over columns of each column's ECE, as
    `expected_calibration_error` and `label_calibration` compute it. (R,)

    A bin's share times |accuracy - confidence| is |sum of (right - confidence) over its members| / n, so each
    resample's ECE is a weighted sum per bin: the weights are how often the resample drew each example.
    """
    n, columns = correct.shape
    weights = np.stack([np.bincount(row, minlength=n) for row in idx]).astype(np.float64)  # (R, n)
    total = np.zeros(len(idx))
    for k in range(columns):
        gap = correct[:, k].astype(np.float64) - confidence[:, k]  # (n,)
        members = np.eye(bins)[bin_of(confidence[:, k], bins)] * gap[:, None]  # (n, bins)
        total += np.abs(weights @ members).sum(axis=1) / n
    return total / columns


def ece_with_interval(confidence: np.ndarray, correct: np.ndarray, bins: int, args: Any) -> tuple[float, list]:
    """The ECE of decisions (n, m) and its 95% bootstrap interval over the examples (`args`:
    `compare.scoring.statistics.StatisticsArguments`)."""
    from compare.scoring.statistics import CHUNK, interval

    n = len(correct)
    rng = np.random.default_rng(args.bootstrap_seed)
    point = ece_samples(confidence, correct, bins, np.arange(n)[None, :])[0]
    samples = np.concatenate(
        [
            ece_samples(
                confidence, correct, bins, rng.integers(0, n, size=(min(CHUNK, args.bootstrap_resamples - s), n))
            )
            for s in range(0, args.bootstrap_resamples, CHUNK)
        ]
    )
    return float(point), interval(samples)


def calibration_entries(
    kind: Kind, probs: np.ndarray, gold: np.ndarray, temperatures: list[float] | None, args: Any
) -> dict[str, Any]:
    """A model's calibration entries of results.json: `ece` (of the calibrated probabilities the model gives) and
    `ece_uncalibrated`, each with its interval (`_ci`), `temperatures` (None for a run
    without calibration, whose two ECEs are one) and the bins before calibration (`reliability_uncalibrated`).
    Nothing for a kind that gives values."""
    if kind.gives_values:
        return {}
    raw = kind.calibration.apply(probs, None if temperatures is None else [1.0 / t for t in temperatures])
    entries: dict[str, Any] = {"temperatures": temperatures}
    for suffix, p in (("", probs), ("_uncalibrated", raw)):
        confidence, correct = reported(kind).confidences(p, gold)
        entries[f"ece{suffix}"], entries[f"ece{suffix}_ci"] = ece_with_interval(
            confidence, correct, args.ece_bins, args
        )
    confidence, correct = reported(kind).confidences(raw, gold)
    entries["reliability_uncalibrated"] = reliability_of(confidence.ravel(), correct.ravel(), args.ece_bins)
    return entries
