"""Matthews correlation coefficient, for two or more classes (Gorodkin's generalisation).

From the confusion matrix C (rows gold, columns predicted) with n examples, c correct, t_k examples of
class k and p_k predictions of class k:

    MCC = (c * n - sum_k t_k p_k) / sqrt((n^2 - sum_k p_k^2) (n^2 - sum_k t_k^2))

It is 1 for perfect predictions, about 0 for chance, and 0 when either factor under the root is 0 (for
instance when every prediction is the same class).

Examples:
    >>> from compare.scoring.metrics import load_metric
    >>> mcc = load_metric("matthews_correlation")
    >>> mcc.compute(predictions=[0, 1, 1, 0], references=[0, 1, 1, 0])
    {'matthews_correlation': 1.0}
    >>> mcc.compute(predictions=[1, 0, 0, 1], references=[0, 1, 1, 0])
    {'matthews_correlation': -1.0}
    >>> round(mcc.compute(predictions=[0, 1, 1, 1], references=[0, 1, 0, 1])["matthews_correlation"], 4)
    0.5774
    >>> mcc.compute(predictions=[1, 1, 1], references=[0, 1, 1])
    {'matthews_correlation': 0.0}
"""

import evaluate
import numpy as np

from compare.scoring.metrics import label_id_info
from core.metrics import confusion_counts

_DESCRIPTION = "Matthews correlation coefficient between predicted and gold labels, for any number of classes."
_KWARGS_DESCRIPTION = """
Args:
    predictions (list of int): predicted label ids.
    references (list of int): gold label ids.
Returns:
    matthews_correlation (float): in -1..1.
"""


class MatthewsCorrelation(evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return label_id_info(_DESCRIPTION, _KWARGS_DESCRIPTION)

    def _compute(self, predictions: list[int], references: list[int]) -> dict[str, float]:
        predictions, references = np.asarray(predictions, np.int64), np.asarray(references, np.int64)
        num_labels = int(max(predictions.max(initial=0), references.max(initial=0))) + 1
        confusion = confusion_counts(references, predictions, num_labels)[0].astype(float)  # (K, K), rows gold
        t, p = confusion.sum(axis=1), confusion.sum(axis=0)  # (K,) gold and predicted counts
        n, correct = float(len(references)), float(np.trace(confusion))
        denominator = np.sqrt((n * n - p @ p) * (n * n - t @ t))
        if denominator == 0:
            return {"matthews_correlation": 0.0}
        return {"matthews_correlation": float((correct * n - t @ p) / denominator)}
