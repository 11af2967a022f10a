"""The Keras objects the kinds build (`core.kinds`): kept apart so that reading a kind does not import TensorFlow."""

from __future__ import annotations

import tensorflow as tf


@tf.keras.utils.register_keras_serializable(package="core")
class SparseCrossentropy(tf.keras.losses.Loss):
    """Cross-entropy of logits (B, C) against class ids (B,), the one-hot target smoothed by `label_smoothing` as
    `tf.keras.losses.CategoricalCrossentropy` smooths it (Keras 2's sparse loss has no smoothing)."""

    def __init__(self, label_smoothing: float = 0.0, name: str = "sparse_crossentropy", **kwargs) -> None:
        super().__init__(name=name, **kwargs)
        self.label_smoothing = label_smoothing
        self.categorical = tf.keras.losses.CategoricalCrossentropy(
            from_logits=True, label_smoothing=label_smoothing, reduction=tf.keras.losses.Reduction.NONE
        )

    def call(self, y_true: tf.Tensor, y_pred: tf.Tensor) -> tf.Tensor:
        ids = tf.cast(tf.reshape(y_true, [-1]), tf.int32)  # (B,)
        return self.categorical(tf.one_hot(ids, tf.shape(y_pred)[-1]), y_pred)  # (B,)

    def get_config(self) -> dict:
        return {**super().get_config(), "label_smoothing": self.label_smoothing}


@tf.keras.utils.register_keras_serializable(package="core")
class MacroF1(tf.keras.metrics.Metric):
    """Macro-F1 of multi-label logits at probability 0.5 (logit 0), accumulated over batches: the mean over labels of
    2 TP / (predicted + actual), 0 for a label neither present nor predicted (as `core.multilabel.multilabel_scores`).

    Args:
        num_labels: the labels L; `update_state` takes multi-hot targets (B, L) and logits (B, L).
    """

    def __init__(self, num_labels: int, name: str = "macro_f1", **kwargs) -> None:
        super().__init__(name=name, **kwargs)
        self.num_labels = num_labels
        self.counts = self.add_weight("counts", shape=(3, num_labels), initializer="zeros")  # tp, predicted, actual

    def update_state(self, y_true: tf.Tensor, y_pred: tf.Tensor, sample_weight: tf.Tensor | None = None) -> None:
        gold = tf.cast(y_true, tf.float32)  # (B, L)
        pred = tf.cast(y_pred >= 0, tf.float32)  # sigmoid(logit) >= 0.5, (B, L)
        counts = [tf.reduce_sum(gold * pred, 0), tf.reduce_sum(pred, 0), tf.reduce_sum(gold, 0)]  # (L,) each
        self.counts.assign_add(tf.stack(counts))

    def result(self) -> tf.Tensor:
        tp, predicted, actual = tf.unstack(self.counts)
        return tf.reduce_mean(tf.math.divide_no_nan(2 * tp, predicted + actual))

    def reset_state(self) -> None:
        self.counts.assign(tf.zeros_like(self.counts))

    def get_config(self) -> dict:
        return {**super().get_config(), "num_labels": self.num_labels}
