"""Accuracy: the fraction of predictions equal to the reference label (counted by `core.metrics`).

Examples:
    >>> from compare.scoring.metrics import load_metric
    >>> accuracy = load_metric("accuracy")
    >>> accuracy.compute(predictions=[0, 1, 1, 0], references=[0, 1, 0, 0])
    {'accuracy': 0.75}
    >>> accuracy.compute(predictions=[2, 2], references=[2, 2])
    {'accuracy': 1.0}
"""

import evaluate
import numpy as np

from compare.scoring.metrics import label_id_info
from core.metrics import accuracy_and_macro_f1, confusion_counts

_DESCRIPTION = "Accuracy: the fraction of examples whose predicted label equals the reference label."
_KWARGS_DESCRIPTION = """
Args:
    predictions (list of int): predicted label ids.
    references (list of int): gold label ids.
Returns:
    accuracy (float): in 0..1.
"""


class Accuracy(evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return label_id_info(_DESCRIPTION, _KWARGS_DESCRIPTION)

    def _compute(self, predictions: list[int], references: list[int]) -> dict[str, float]:
        predictions, references = np.asarray(predictions, np.int64), np.asarray(references, np.int64)
        num_labels = int(max(predictions.max(initial=0), references.max(initial=0))) + 1
        accuracy, _ = accuracy_and_macro_f1(confusion_counts(references, predictions, num_labels))
        return {"accuracy": float(accuracy[0])}
