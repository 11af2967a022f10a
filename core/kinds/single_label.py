"""Single-label classification: one class per text, softmax outputs, decided by argmax."""

from __future__ import annotations

from typing import Any

import numpy as np

from core.calibration import SOFTMAX
from core.kinds.base import EPSILON, Kind, register
from core.metrics import classification_scores


@register
class SingleLabel(Kind):
    name = "single_label_classification"
    title = "single-label classification"
    short = "classification"
    headline = "accuracy"
    second = "macro_f1"
    validation_fields = ("accuracy", "macro_f1")
    calibration = SOFTMAX
    smooths_labels = True

    def check_class_weight(self, class_weight: str) -> None:
        """Every class weight is allowed: the classes are exclusive."""

    def loss(self, label_smoothing: float = 0.0) -> Any:
        import tensorflow as tf

        if label_smoothing:
            from core.kinds.keras_objects import SparseCrossentropy

            return SparseCrossentropy(label_smoothing)
        return tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def metrics(self, num_outputs: int) -> list:
        import tensorflow as tf

        return [tf.keras.metrics.SparseCategoricalAccuracy(name="accuracy")]

    def activate(self, logits: Any) -> Any:
        import tensorflow as tf

        return tf.nn.softmax(tf.cast(logits, tf.float32), axis=-1)

    def output_layer(self) -> Any:
        import tensorflow as tf

        return tf.keras.layers.Softmax(dtype="float32", name=self.outputs)

    def targets(self, labels_column: list, num_labels: int) -> np.ndarray:
        """Class ids, int64 (n,)."""
        return np.asarray(labels_column, dtype=np.int64)

    def check_train(self, targets: np.ndarray, labels: list[str]) -> str | None:
        present = set(np.asarray(targets).tolist())
        if len(present) < 2:
            only = labels[present.pop()] if present else "none"
            return (
                f"The train split holds one class only ({only!r}) in {len(targets)} rows; "
                "a classifier needs examples of at least two classes."
            )
        return None

    def stratify(self) -> bool:
        return True

    def decide(self, outputs: np.ndarray, thresholds: list[float] | None = None) -> np.ndarray:
        return np.asarray(outputs).argmax(axis=1)

    def answer(self, labels: list[str], decision: Any) -> Any:
        return labels[int(decision)]

    def validation_scores(
        self, targets: np.ndarray, outputs: np.ndarray, thresholds: list[float] | None = None
    ) -> dict[str, float]:
        outputs = np.asarray(outputs)
        scores = classification_scores(targets, self.decide(outputs), outputs.shape[1])
        return {"loss": cross_entropy(targets, outputs), **scores}

    def label_feature(self, labels: list[str]) -> Any:
        import datasets

        return datasets.ClassLabel(names=labels)

    def map_labels(self, raw: dict, labels: list[str] | None, separator: str) -> tuple[dict[str, list], list[str]]:
        from core.labels import class_ids

        return class_ids(raw, labels, separator)

    def tidy_outputs(self, outputs: np.ndarray) -> np.ndarray:
        """Rows renormalised to sum to 1 (a float32 softmax, or another runtime's, may miss by a rounding error)."""
        return outputs / outputs.sum(axis=1, keepdims=True)


def cross_entropy(targets: np.ndarray, outputs: np.ndarray) -> float:
    """The mean loss of class probabilities (n, C) against class ids (n,), as the training loss counts it."""
    probs = np.clip(np.asarray(outputs, np.float64), EPSILON, 1 - EPSILON)
    return float(-np.mean(np.log(probs[np.arange(len(probs)), np.asarray(targets, np.int64)])))
