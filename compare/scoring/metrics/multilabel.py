"""Multi-label scores: micro- and macro-F1, per-label F1, subset accuracy and Hamming loss.

Inputs are one row of 0/1 decisions per example, one column per label (the run's thresholds already
applied). The counting is `core.multilabel`'s, the one run.json's validation scores use.

Examples:
    >>> from compare.scoring.metrics import load_metric
    >>> scores = load_metric("multilabel").compute(
    ...     predictions=[[1, 0, 0], [1, 1, 0], [0, 0, 0]], references=[[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    ... )
    >>> round(scores["micro_f1"], 4), round(scores["macro_f1"], 4), scores["per_label_f1"]
    (0.6667, 0.5556, [0.6666666666666666, 1.0, 0.0])
    >>> round(scores["subset_accuracy"], 4), round(scores["hamming_loss"], 4)
    (0.3333, 0.2222)
"""

import datasets
import evaluate
import numpy as np

from core.multilabel import multilabel_scores

_DESCRIPTION = "Micro- and macro-F1, per-label F1, subset accuracy and Hamming loss of multi-label decisions."
_KWARGS_DESCRIPTION = """
Args:
    predictions (list of list of int): 0/1 decisions, one row per example, one column per label.
    references (list of list of int): 0/1 gold labels, the same shape.
Returns:
    micro_f1, macro_f1 (float): F1 over every (example, label) decision, and the mean of per-label F1.
    per_label_f1 (list of float): in column order; 0 for a label neither present nor predicted.
    subset_accuracy (float): the fraction of examples whose every label is right.
    hamming_loss (float): the fraction of wrong (example, label) decisions.
"""


class Multilabel(evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation="",
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "predictions": datasets.Sequence(datasets.Value("int64")),
                    "references": datasets.Sequence(datasets.Value("int64")),
                }
            ),
        )

    def _compute(self, predictions: list[list[int]], references: list[list[int]]) -> dict:
        return multilabel_scores(np.asarray(references, np.int64), np.asarray(predictions, np.int64))
