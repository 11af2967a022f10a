"""The share of the fine-tuned model's lead that distillation wins back for the from-scratch model.

    gap closed = (score of distilled - score of scratch) / (score of finetune - score of scratch)

in the task's headline score (accuracy, macro-F1 or Spearman; `Kind.headline`). 0 is no gain over the
from-scratch model, 1 the whole gap; it falls outside 0..1 when the student does worse than the from-scratch model
or better than its teacher. The interval is a paired percentile bootstrap: every resample draws the same examples
for the three models (`resampled_scores`), and resamples on which the fine-tuned and the from-scratch models score
the same (no gap to close) are left out.
"""

from __future__ import annotations

import numpy as np

from compare.scoring.statistics import DEFAULT_KIND, StatisticsArguments, interval, point_scores, resampled_scores
from core import sides
from core.kinds import Kind

# results.json `gap_closed.scores` names the three models by their roles: the pretrained and the from-scratch sides, and
# the student distillation trains (`core.sides`).
GAP_MODELS = (sides.PRETRAINED, sides.FROM_SCRATCH, "distilled")


def share(finetune: np.ndarray, scratch: np.ndarray, distilled: np.ndarray) -> np.ndarray:
    """The gap closed for scores given elementwise; NaN where finetune equals scratch."""
    gap = np.asarray(finetune, float) - np.asarray(scratch, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(gap != 0, (np.asarray(distilled, float) - scratch) / np.where(gap != 0, gap, 1), np.nan)


def gap_closed(
    gold: np.ndarray,
    finetune: np.ndarray,
    scratch: np.ndarray,
    distilled: np.ndarray,
    num_labels: int,
    args: StatisticsArguments,
    kind: Kind = DEFAULT_KIND,
) -> dict:
    """results.json `gap_closed` from the three models' decisions on the same examples.

    Returns:
        `value` (null when the two sides score the same), `ci` ([lo, hi], null without a usable resample),
        `metric` (the headline score) and the three models' `scores` in it, and `resamples_used`.
    """
    metric, preds = kind.headline, [finetune, scratch, distilled]
    points = [point_scores(gold, p, num_labels, kind)[metric] for p in preds]
    value = float(share(*points))
    samples = share(*(s[metric] for s in resampled_scores(gold, preds, num_labels, args, kind)))
    usable = samples[np.isfinite(samples)]
    return {
        "value": None if np.isnan(value) else value,
        "ci": interval(usable) if len(usable) else None,
        "metric": metric,
        "scores": dict(zip(GAP_MODELS, points)),
        "resamples_used": int(len(usable)),
    }
