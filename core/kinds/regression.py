"""Regression: one number per text, the value itself is the answer, ranked by Spearman's rho."""

from __future__ import annotations

from typing import Any

import numpy as np

from core.kinds.base import Kind, register
from core.regression import regression_scores


@register
class Regression(Kind):
    name = "regression"
    title = "regression"
    short = "regression"
    headline = "spearman"
    second = "pearson"
    validation_fields = ("spearman", "pearson", "mse")
    outputs = "values"
    unit = None
    why_no_class_weight = "a regression task has no classes"

    def num_outputs(self, num_labels: int) -> int:
        return 1

    def loss(self, label_smoothing: float = 0.0) -> Any:
        import tensorflow as tf

        return tf.keras.losses.MeanSquaredError()

    def activate(self, logits: Any) -> Any:
        import tensorflow as tf

        return tf.reshape(tf.cast(logits, tf.float32), [-1])  # (B, 1) -> (B,)

    def output_layer(self) -> Any:
        import tensorflow as tf

        return tf.keras.layers.Reshape((), dtype="float32", name=self.outputs)  # (B, 1) -> (B,)

    def targets(self, labels_column: list, num_labels: int) -> np.ndarray:
        """The values, float32 (n,)."""
        return np.asarray(labels_column, dtype=np.float32)

    def check_train(self, targets: np.ndarray, labels: list[str]) -> str | None:
        targets = np.asarray(targets)
        if len(targets) and targets.min() == targets.max():
            return (
                f"Every label of the train split is {float(targets[0]):g} ({len(targets)} rows); a regression model "
                "needs values that vary."
            )
        return None

    def data_record(self, train_targets: np.ndarray) -> dict[str, Any]:
        """`value_range`: the train split's smallest and largest value, the scale the app shows a value on."""
        return {"value_range": [float(np.min(train_targets)), float(np.max(train_targets))]}

    def decide(self, outputs: np.ndarray, thresholds: list[float] | None = None) -> np.ndarray:
        return np.asarray(outputs)

    def monitored_score(self, targets: np.ndarray, outputs: np.ndarray) -> float | None:
        """Spearman's rho of every validation value at once: a rank statistic no batch-wise metric computes."""
        return regression_scores(targets, outputs)["spearman"]

    def answer(self, labels: list[str], decision: Any) -> Any:
        return round(float(decision), 6)

    def validation_scores(
        self, targets: np.ndarray, outputs: np.ndarray, thresholds: list[float] | None = None
    ) -> dict[str, float]:
        found = regression_scores(targets, outputs)
        return {"loss": squared_error(targets, outputs), **{k: found[k] for k in ("spearman", "pearson", "mse", "mae")}}

    def empty_outputs(self, num_labels: int) -> np.ndarray:
        return np.zeros((0,), np.float32)

    def label_feature(self, labels: list[str]) -> Any:
        import datasets

        return datasets.Value("float32")

    def map_labels(self, raw: dict, labels: list[str] | None, separator: str) -> tuple[dict[str, list], list[str]]:
        from core.labels import numbers

        return numbers(raw), []


def squared_error(targets: np.ndarray, outputs: np.ndarray) -> float:
    """The mean squared error of values (n,) against the targets (n,), as the training loss counts it."""
    return float(np.mean((np.asarray(outputs, np.float64) - np.asarray(targets, np.float64)) ** 2))
