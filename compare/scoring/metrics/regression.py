"""Regression scores: Pearson and Spearman correlation, mean squared and mean absolute error.

The arithmetic is `core.regression`'s, the one run.json's validation scores use.

Examples:
    >>> from compare.scoring.metrics import load_metric
    >>> scores = load_metric("regression").compute(predictions=[1.5, 1.5, 3.5, 5.0], references=[1.0, 2.0, 3.0, 4.0])
    >>> {name: round(value, 4) for name, value in scores.items()}
    {'pearson': 0.9483, 'spearman': 0.9487, 'mse': 0.4375, 'mae': 0.625}
"""

import datasets
import evaluate
import numpy as np

from core.regression import regression_scores

_DESCRIPTION = "Pearson and Spearman correlation, mean squared and mean absolute error of predicted values."
_KWARGS_DESCRIPTION = """
Args:
    predictions (list of float): predicted values.
    references (list of float): gold values.
Returns:
    pearson, spearman (float): correlations in -1..1 (0 when either side is constant).
    mse, mae (float): mean squared and mean absolute error, in the label's units (squared for mse).
"""


class Regression(evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation="",
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {"predictions": datasets.Value("float64"), "references": datasets.Value("float64")}
            ),
        )

    def _compute(self, predictions: list[float], references: list[float]) -> dict[str, float]:
        return regression_scores(np.asarray(references, np.float64), np.asarray(predictions, np.float64))
