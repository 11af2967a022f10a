"""Multi-label classification: any number of labels per text, a sigmoid per label, decided by per-label thresholds
chosen on validation (`core.multilabel`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from core.calibration import SIGMOID
from core.kinds.base import EPSILON, Kind, register
from core.multilabel import choose_thresholds, multilabel_scores
from core.multilabel import predict as multilabel_predict


@register
class MultiLabel(Kind):
    name = "multi_label_classification"
    title = "multi-label classification"
    short = "multi-label"
    headline = "macro_f1"
    second = "micro_f1"
    validation_fields = ("macro_f1", "micro_f1")
    unit = "label"
    why_no_class_weight = "multi-label labels overlap"
    calibration = SIGMOID
    reads_label_columns = True

    def loss(self, label_smoothing: float = 0.0) -> Any:
        import tensorflow as tf

        return tf.keras.losses.BinaryCrossentropy(from_logits=True, label_smoothing=label_smoothing)

    def metrics(self, num_outputs: int) -> list:
        from core.kinds.keras_objects import MacroF1

        return [MacroF1(num_outputs, name="macro_f1")]

    def activate(self, logits: Any) -> Any:
        import tensorflow as tf

        return tf.sigmoid(tf.cast(logits, tf.float32))

    def output_layer(self) -> Any:
        import tensorflow as tf

        return tf.keras.layers.Activation("sigmoid", dtype="float32", name=self.outputs)

    def targets(self, labels_column: list, num_labels: int) -> np.ndarray:
        """Multi-hot rows, float32 (n, L)."""
        return np.asarray(labels_column, dtype=np.float32).reshape(-1, num_labels)

    def check_train(self, targets: np.ndarray, labels: list[str]) -> str | None:
        if len(labels) < 2:
            return (
                f"The data names {len(labels)} label(s) ({', '.join(labels)}); multi-label data needs at least two. "
                "For one yes/no label per text use the default --problem with --label-column."
            )
        if not np.asarray(targets).any():
            return f"No row of the train split has any label ({len(targets)} rows); a model cannot learn them."
        return None

    def decide(self, outputs: np.ndarray, thresholds: list[float] | None = None) -> np.ndarray:
        """0/1 rows (n, L), int64: a label is chosen when its probability reaches its threshold."""
        if thresholds is None:
            raise ValueError("a multi-label model decides by its thresholds; this run records none.")
        return multilabel_predict(outputs, np.asarray(thresholds))

    def monitored_score(self, targets: np.ndarray, outputs: np.ndarray) -> float | None:
        """Macro-F1 at the thresholds chosen on these validation outputs: what the kept run will decide by. At a
        fixed 0.5 a rare label's F1 is 0 until late in training, and early stopping would keep the wrong epoch."""
        outputs = np.asarray(outputs)
        return self.validation_scores(targets, outputs, self.choose_thresholds(outputs, targets))["macro_f1"]

    def choose_thresholds(self, outputs: np.ndarray, targets: np.ndarray) -> list[float] | None:
        return [float(t) for t in choose_thresholds(outputs, targets)]

    def answer(self, labels: list[str], decision: Any) -> Any:
        return [labels[k] for k in np.flatnonzero(decision)]

    def validation_scores(
        self, targets: np.ndarray, outputs: np.ndarray, thresholds: list[float] | None = None
    ) -> dict[str, float]:
        found = multilabel_scores(np.asarray(targets, np.int64), self.decide(outputs, thresholds))
        scores = {k: found[k] for k in ("macro_f1", "micro_f1", "subset_accuracy", "hamming_loss")}
        return {"loss": binary_cross_entropy(targets, outputs), **scores}

    def label_feature(self, labels: list[str]) -> Any:
        import datasets

        return datasets.List(datasets.Value("float32"), length=len(labels))

    def map_labels(self, raw: dict, labels: list[str] | None, separator: str) -> tuple[dict[str, list], list[str]]:
        from core.labels import multi_hot

        return multi_hot(raw, labels, separator)

    def focal_loss(self, gamma: float) -> Any:
        """Keras' binary focal cross-entropy on the logits, each label's term scaled by (1 - p_t)^gamma."""
        import tensorflow as tf

        return tf.keras.losses.BinaryFocalCrossentropy(gamma=gamma, from_logits=True)


def binary_cross_entropy(targets: np.ndarray, outputs: np.ndarray) -> float:
    """The mean loss of label probabilities (n, L) against 0/1 rows (n, L), as the training loss counts it."""
    probs = np.clip(np.asarray(outputs, np.float64), EPSILON, 1 - EPSILON)
    gold = np.asarray(targets, np.float64)
    return float(-np.mean(gold * np.log(probs) + (1 - gold) * np.log(1 - probs)))
