"""Regression metrics defined once: Pearson and Spearman correlation, mean squared and absolute error.

Spearman's rho is Pearson's r of the ranks, ties sharing their average rank (as `scipy.stats.spearmanr`).
A constant input has no correlation: r is reported as 0.0 rather than NaN, so a report always has a number
and a model that predicts one value for everything scores as uninformative.

Examples:
    >>> scores = regression_scores(np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.5, 1.5, 3.5, 5.0]))
    >>> {k: round(v, 4) for k, v in scores.items()}
    {'pearson': 0.9483, 'spearman': 0.9487, 'mse': 0.4375, 'mae': 0.625}
"""

from __future__ import annotations

import numpy as np


def ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks of `values` (n,), ties given their average rank."""
    values = np.asarray(values, np.float64)
    unique, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    first = np.cumsum(counts) - counts  # 0-based rank of each unique value's first occurrence
    return (first + (counts + 1) / 2)[inverse]


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    dx, dy = x - x.mean(), y - y.mean()
    denominator = np.sqrt((dx * dx).sum() * (dy * dy).sum())
    return float((dx * dy).sum() / denominator) if denominator > 0 else 0.0


def regression_scores(gold: np.ndarray, pred: np.ndarray) -> dict[str, float]:
    """`{"pearson", "spearman", "mse", "mae"}` of predicted values against gold values, both (n,)."""
    gold, pred = np.asarray(gold, np.float64), np.asarray(pred, np.float64)
    error = pred - gold
    return {
        "pearson": pearson(gold, pred),
        "spearman": pearson(ranks(gold), ranks(pred)),
        "mse": float((error * error).mean()),
        "mae": float(np.abs(error).mean()),
    }
