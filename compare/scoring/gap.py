"""The share of the fine-tuned model's lead that distillation wins back for the from-scratch model.

    gap closed = (accuracy of distilled - accuracy of scratch) / (accuracy of finetune - accuracy of scratch)

0 is no gain over the from-scratch model, 1 the whole gap; it falls outside 0..1 when the student does worse
than the from-scratch model or better than its teacher. The interval is a paired percentile bootstrap: every
resample draws the same examples for the three models (`resampled_scores`), and resamples on which the
fine-tuned and the from-scratch models score the same (no gap to close) are left out.
"""

from __future__ import annotations

import numpy as np

from compare.scoring.statistics import StatisticsArguments, interval, resampled_scores
from core.metrics import accuracy_and_macro_f1, confusion_counts


def share(finetune: np.ndarray, scratch: np.ndarray, distilled: np.ndarray) -> np.ndarray:
    """The gap closed for accuracies given elementwise; NaN where finetune equals scratch."""
    gap = np.asarray(finetune, float) - np.asarray(scratch, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(gap != 0, (np.asarray(distilled, float) - scratch) / np.where(gap != 0, gap, 1), np.nan)


def gap_closed(
    gold: np.ndarray,
    finetune: np.ndarray,
    scratch: np.ndarray,
    distilled: np.ndarray,
    num_classes: int,
    args: StatisticsArguments,
) -> dict:
    """results.json `gap_closed` from the three models' predicted label ids on the same examples.

    Returns:
        `value` (null when the two sides score the same), `ci` ([lo, hi], null without a usable resample),
        the three `accuracies` and `resamples_used`.
    """
    preds = [finetune, scratch, distilled]
    points = [float(accuracy_and_macro_f1(confusion_counts(gold, p, num_classes))[0][0]) for p in preds]
    value = float(share(*points))
    samples = share(*(accuracy for accuracy, _ in resampled_scores(gold, preds, num_classes, args)))
    usable = samples[np.isfinite(samples)]
    return {
        "value": None if np.isnan(value) else value,
        "ci": interval(usable) if len(usable) else None,
        "accuracies": dict(zip(("finetune", "scratch", "distilled"), points)),
        "resamples_used": int(len(usable)),
    }
