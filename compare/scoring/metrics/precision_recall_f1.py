"""Precision, recall and F1 per class, and their macro and support-weighted averages.

A class that is never predicted has precision 0, one that never occurs has recall 0, and F1 is 0 when
both are 0 (scikit-learn's `zero_division=0`). `labels` fixes which classes are scored and in what order;
by default, every label that occurs in `references` or `predictions`, sorted. The counting is
`core.metrics`', the one the runs' validation scores and the bootstrap intervals use.

Examples:
    >>> from compare.scoring.metrics import load_metric
    >>> scores = load_metric("precision_recall_f1")
    >>> result = scores.compute(predictions=[0, 0, 1, 1], references=[0, 1, 1, 1])
    >>> result["precision"], result["recall"], result["f1"]
    ([0.5, 1.0], [1.0, 0.6666666666666666], [0.6666666666666666, 0.8])
    >>> result["support"], round(result["macro_f1"], 4), round(result["weighted_f1"], 4)
    ([1, 3], 0.7333, 0.7667)
    >>> scores.compute(predictions=[0, 0], references=[0, 0], labels=[0, 1])["f1"]
    [1.0, 0.0]
"""

import evaluate
import numpy as np

from compare.scoring.metrics import label_id_info
from core.metrics import confusion_counts, per_class

_DESCRIPTION = "Per-class precision, recall and F1 with their macro and support-weighted averages."
_KWARGS_DESCRIPTION = """
Args:
    predictions (list of int): predicted label ids.
    references (list of int): gold label ids.
    labels (list of int, optional): the classes to score, in order.
Returns:
    precision, recall, f1 (list of float): per class, in `labels` order.
    support (list of int): reference count per class.
    macro_precision, macro_recall, macro_f1 (float): unweighted means over classes.
    weighted_precision, weighted_recall, weighted_f1 (float): means weighted by support.
"""


class PrecisionRecallF1(evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return label_id_info(_DESCRIPTION, _KWARGS_DESCRIPTION)

    def _compute(self, predictions: list[int], references: list[int], labels: list[int] | None = None) -> dict:
        predictions, references = np.asarray(predictions, np.int64), np.asarray(references, np.int64)
        if labels is None:
            labels = sorted(set(predictions.tolist()) | set(references.tolist()))
        labels = np.asarray(labels, np.int64)
        num_labels = int(max(predictions.max(initial=0), references.max(initial=0), labels.max(initial=0))) + 1
        scores = per_class(confusion_counts(references, predictions, num_labels))
        precision, recall, f1 = (scores[name][0, labels] for name in ("precision", "recall", "f1"))  # (K,) each
        support = scores["support"][0, labels]
        weights = support / support.sum() if support.sum() else np.zeros(len(labels))
        result = {"precision": precision, "recall": recall, "f1": f1}
        averages = {}
        for name, values in result.items():
            averages[f"macro_{name}"] = float(values.mean())
            averages[f"weighted_{name}"] = float((values * weights).sum())
        return {
            **{name: [float(v) for v in values] for name, values in result.items()},
            "support": [int(s) for s in support],
            **averages,
        }
