"""The distillation loss (Hinton et al. 2015) and the accuracy on gold labels that training reports beside it.

Keras hands a loss one target tensor, so each row's targets are packed side by side (`pack_targets`):

    [ one-hot gold label (K) | teacher logits (K) | 1 for a real row, 0 for an augmented one ]   (B, 2K + 1)

Per row, with p_T = softmax(logits / T):

    real row:       A * cross-entropy(gold, model) + (1 - A) * T^2 * KL(teacher p_T || model p_T)
    augmented row:                                    (1 - A) * T^2 * KL(teacher p_T || model p_T)

The T^2 keeps the soft term's gradients on the scale of the hard term's whatever the temperature. Teacher
log-probabilities serve as its logits: softmax(log p / T) is the teacher's tempered softmax.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf


def pack_targets(gold: np.ndarray, teacher_logits: np.ndarray) -> np.ndarray:
    """(n, 2K + 1) targets from gold label ids (n,) (-1 for an augmented row) and teacher logits (n, K)."""
    n, k = teacher_logits.shape
    real = gold >= 0
    one_hot = np.zeros([n, k], np.float32)
    one_hot[np.flatnonzero(real), gold[real]] = 1.0
    return np.concatenate([one_hot, teacher_logits.astype(np.float32), real[:, None].astype(np.float32)], axis=1)


def unpack(y_true: tf.Tensor, num_labels: int) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """(gold one-hot (B, K), teacher logits (B, K), real (B,)) from packed targets (B, 2K + 1)."""
    return y_true[:, :num_labels], y_true[:, num_labels : 2 * num_labels], y_true[:, 2 * num_labels]


class DistillationLoss(tf.keras.losses.Loss):
    """A * smoothed cross-entropy with the gold label (real rows only) + (1 - A) * T^2 * KL at temperature T.

    Args:
        num_labels: K.
        weight: A in [0, 1]; 1 is training on gold labels alone, 0 on the teacher alone.
        temperature: T > 0.
        label_smoothing: of the gold term, as in training without a teacher.
    """

    def __init__(
        self, num_labels: int, weight: float, temperature: float, label_smoothing: float = 0.0, **kwargs
    ) -> None:
        super().__init__(name=kwargs.pop("name", "distillation"), **kwargs)
        self.num_labels = num_labels
        self.weight = weight
        self.temperature = temperature
        self.label_smoothing = label_smoothing

    def call(self, y_true: tf.Tensor, y_pred: tf.Tensor) -> tf.Tensor:
        gold, teacher, real = unpack(tf.cast(y_true, tf.float32), self.num_labels)
        logits = tf.cast(y_pred, tf.float32)  # (B, K)
        hard = tf.keras.losses.categorical_crossentropy(
            gold, logits, from_logits=True, label_smoothing=self.label_smoothing
        )  # (B,)
        t = self.temperature
        teacher_log_p = tf.nn.log_softmax(teacher / t, axis=-1)  # (B, K)
        student_log_p = tf.nn.log_softmax(logits / t, axis=-1)  # (B, K)
        kl = tf.reduce_sum(tf.exp(teacher_log_p) * (teacher_log_p - student_log_p), axis=-1)  # (B,)
        return real * self.weight * hard + (1.0 - self.weight) * t**2 * kl  # (B,)

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "num_labels": self.num_labels,
            "weight": self.weight,
            "temperature": self.temperature,
            "label_smoothing": self.label_smoothing,
        }


class GoldAccuracy(tf.keras.metrics.Metric):
    """Accuracy against the gold labels of the real rows of packed targets; augmented rows have none."""

    def __init__(self, num_labels: int, name: str = "accuracy", **kwargs) -> None:
        super().__init__(name=name, **kwargs)
        self.num_labels = num_labels
        self.correct = self.add_weight(name="correct", initializer="zeros")
        self.total = self.add_weight(name="total", initializer="zeros")

    def update_state(self, y_true: tf.Tensor, y_pred: tf.Tensor, sample_weight: tf.Tensor | None = None) -> None:
        gold, _, real = unpack(tf.cast(y_true, tf.float32), self.num_labels)
        hit = tf.cast(tf.equal(tf.argmax(gold, axis=-1), tf.argmax(y_pred, axis=-1)), tf.float32)  # (B,)
        self.correct.assign_add(tf.reduce_sum(hit * real))
        self.total.assign_add(tf.reduce_sum(real))

    def result(self) -> tf.Tensor:
        return tf.math.divide_no_nan(self.correct, self.total)

    def reset_state(self) -> None:
        self.correct.assign(0.0)
        self.total.assign(0.0)

    def get_config(self) -> dict:
        return {**super().get_config(), "num_labels": self.num_labels}
