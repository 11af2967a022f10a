"""Quality of one model's probabilities on a labelled split, through the suite's `evaluate` modules."""

from __future__ import annotations

import numpy as np

from compare.scoring.calibration import expected_calibration_error, log_loss, reliability
from compare.scoring.metrics import load_metric
from compare.scoring.statistics import StatisticsArguments, model_intervals
from core.metrics import confusion_counts


def score(probs: np.ndarray, gold: np.ndarray, labels: list[str], args: StatisticsArguments) -> dict:
    """Accuracy, F1s, MCC, calibration and bootstrap intervals of one model.

    Args:
        probs: (n, K) class probabilities.
        gold: (n,) gold label ids.
        labels: the K class names.
    Returns:
        the model's quality entries of results.json (`per_class` keyed by label name), plus `confusion`
        (K x K, rows gold) and `reliability` (per-bin table).
    """
    pred = probs.argmax(axis=1)
    ids = list(range(len(labels)))
    prf = load_metric("precision_recall_f1").compute(predictions=pred, references=gold, labels=ids)
    return {
        "accuracy": load_metric("accuracy").compute(predictions=pred, references=gold)["accuracy"],
        "macro_f1": prf["macro_f1"],
        "weighted_f1": prf["weighted_f1"],
        "mcc": load_metric("matthews_correlation").compute(predictions=pred, references=gold)["matthews_correlation"],
        "ece": expected_calibration_error(probs, gold, args.ece_bins),
        "log_loss": log_loss(probs, gold),
        **model_intervals(gold, pred, len(labels), args),
        "per_class": {
            label: {
                "precision": prf["precision"][k],
                "recall": prf["recall"][k],
                "f1": prf["f1"][k],
                "support": prf["support"][k],
            }
            for k, label in enumerate(labels)
        },
        "confusion": confusion_counts(gold, pred, len(labels))[0].tolist(),
        "reliability": reliability(probs, gold, args.ece_bins),
    }


def quick_scores(pred: np.ndarray, gold: np.ndarray, num_classes: int) -> dict:
    """Accuracy and macro-F1 only (baselines and per-seed runs)."""
    prf = load_metric("precision_recall_f1").compute(predictions=pred, references=gold, labels=list(range(num_classes)))
    return {
        "accuracy": load_metric("accuracy").compute(predictions=pred, references=gold)["accuracy"],
        "macro_f1": prf["macro_f1"],
    }
