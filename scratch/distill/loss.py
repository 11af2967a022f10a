"""The distillation loss (Hinton et al. 2015) for every kind of problem, and the gold-label metrics that training
reports beside it.

Keras hands a loss one target tensor, so each row's targets are packed side by side (`pack_targets`), D being the
model's outputs per example (classes, labels, or 1 for regression):

    [ gold targets (D) | teacher's soft targets (D) | 1 for a real row, 0 for an augmented one ]   (B, 2D + 1)

Per row, with A the gold weight and T the temperature:

    single label:  A * cross-entropy(gold, model) + (1 - A) * T^2 * KL(softmax(teacher / T) || softmax(model / T))
    multi-label:   per label, A * binary cross-entropy(gold, model)
                              + (1 - A) * T^2 * KL(sigmoid(teacher / T) || sigmoid(model / T)), averaged over labels
    regression:    A * (model - gold)^2 + (1 - A) * (model - teacher)^2

An augmented row has no gold target and pays only the teacher's term. The T^2 keeps the soft term's gradients on
the scale of the hard term's whatever the temperature. The teacher's soft targets are what `scratch.distill.teacher`
reads from its outputs: log-probabilities (softmax(log p / T) is the teacher's tempered softmax), log-odds (the
logits of its independent probabilities) or values.

Targets of the gold alone (B, D), the validation split's, give the kind's own loss (`gold_loss`), so that a
distilled run's `val_loss` is the one a run without a teacher reports.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from core import kinds
from core.tasks import MULTI_LABEL, REGRESSION, SINGLE_LABEL


def pack_targets(gold: np.ndarray, teacher: np.ndarray) -> np.ndarray:
    """(n, 2D + 1) targets from the gold targets of the first rows, (r, D) (r <= n; regression (r,)), and the
    teacher's soft targets of every row, (n, D): the rows after the first r are augmented."""
    teacher = np.asarray(teacher, np.float32).reshape(len(teacher), -1)  # (n, D)
    gold = np.asarray(gold, np.float32).reshape(len(gold), -1)  # (r, D)
    padded = np.zeros_like(teacher)
    padded[: len(gold)] = gold
    real = (np.arange(len(teacher)) < len(gold)).astype(np.float32)[:, None]  # (n, 1)
    return np.concatenate([padded, teacher, real], axis=1)


def unpack(y_true: tf.Tensor, width: int) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """(gold (B, D), teacher (B, D), real (B,)) from packed targets (B, 2D + 1)."""
    return y_true[:, :width], y_true[:, width : 2 * width], y_true[:, 2 * width]


class DistillationLoss(tf.keras.losses.Loss):
    """The distillation loss of the module docstring for one kind of problem.

    Args:
        problem_type: the task's kind (`core.tasks`).
        width: D, the model's outputs per example.
        weight: A in [0, 1]; 1 is training on gold targets alone, 0 on the teacher alone.
        temperature: T > 0 (not used for regression).
        label_smoothing: of the single-label gold term, as in training without a teacher.
    """

    def __init__(
        self,
        problem_type: str,
        width: int,
        weight: float,
        temperature: float,
        label_smoothing: float = 0.0,
        **kwargs,
    ) -> None:
        super().__init__(name=kwargs.pop("name", "distillation"), **kwargs)
        self.problem_type = kinds.check(problem_type)
        self.width = width
        self.weight = weight
        self.temperature = temperature
        self.label_smoothing = label_smoothing

    def call(self, y_true: tf.Tensor, y_pred: tf.Tensor) -> tf.Tensor:
        y_true, logits = tf.cast(y_true, tf.float32), tf.cast(y_pred, tf.float32)  # (B, 2D + 1) or (B, D); (B, D)
        if y_true.shape[-1] != 2 * self.width + 1:  # the gold alone
            return self.gold_loss(tf.reshape(y_true, tf.shape(logits)), logits)
        gold, teacher, real = unpack(y_true, self.width)
        return real * self.weight * self.gold_loss(gold, logits) + (1.0 - self.weight) * self.teacher_loss(
            teacher, logits
        )  # (B,)

    def gold_loss(self, gold: tf.Tensor, logits: tf.Tensor) -> tf.Tensor:
        """The kind's own loss per row (B,), from gold targets (B, D) and logits (B, D)."""
        if self.problem_type == SINGLE_LABEL:
            return tf.keras.losses.categorical_crossentropy(
                gold, logits, from_logits=True, label_smoothing=self.label_smoothing
            )
        if self.problem_type == MULTI_LABEL:
            return tf.keras.losses.binary_crossentropy(gold, logits, from_logits=True)
        return tf.reduce_mean(tf.square(logits - gold), axis=-1)

    def teacher_loss(self, teacher: tf.Tensor, logits: tf.Tensor) -> tf.Tensor:
        """The teacher's term per row (B,): T^2 times the KL divergence of the tempered outputs, or squared error."""
        t = self.temperature
        if self.problem_type == REGRESSION:
            return tf.reduce_mean(tf.square(logits - teacher), axis=-1)
        if self.problem_type == SINGLE_LABEL:
            teacher_log_p = tf.nn.log_softmax(teacher / t, axis=-1)  # (B, K)
            student_log_p = tf.nn.log_softmax(logits / t, axis=-1)  # (B, K)
            return t**2 * tf.reduce_sum(tf.exp(teacher_log_p) * (teacher_log_p - student_log_p), axis=-1)
        # each label's Bernoulli: log p = log sigmoid(z), log (1 - p) = log sigmoid(-z)
        teacher_p = tf.sigmoid(teacher / t)  # (B, L)
        kl = teacher_p * (tf.math.log_sigmoid(teacher / t) - tf.math.log_sigmoid(logits / t)) + (1 - teacher_p) * (
            tf.math.log_sigmoid(-teacher / t) - tf.math.log_sigmoid(-logits / t)
        )  # (B, L)
        return t**2 * tf.reduce_mean(kl, axis=-1)

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "problem_type": self.problem_type,
            "width": self.width,
            "weight": self.weight,
            "temperature": self.temperature,
            "label_smoothing": self.label_smoothing,
        }


def real_rows(y_true: tf.Tensor, y_pred: tf.Tensor, width: int) -> tuple[tf.Tensor, tf.Tensor]:
    """The gold targets and the outputs of the rows that have gold targets: of packed targets, the real rows; of
    targets of the gold alone (the validation split's), every row."""
    y_true = tf.cast(y_true, tf.float32)
    if y_true.shape[-1] != 2 * width + 1:
        return y_true, y_pred
    gold, _, real = unpack(y_true, width)
    return tf.boolean_mask(gold, real > 0), tf.boolean_mask(y_pred, real > 0)


class GoldAccuracy(tf.keras.metrics.CategoricalAccuracy):
    """Accuracy against the gold labels of the real rows of packed targets; augmented rows have none."""

    def __init__(self, num_labels: int, name: str = "accuracy", **kwargs) -> None:
        super().__init__(name=name, **kwargs)
        self.num_labels = num_labels

    def update_state(self, y_true: tf.Tensor, y_pred: tf.Tensor, sample_weight: tf.Tensor | None = None) -> None:
        super().update_state(*real_rows(y_true, y_pred, self.num_labels))

    def get_config(self) -> dict:
        return {**super().get_config(), "num_labels": self.num_labels}


class GoldMacroF1(kinds.MacroF1):
    """`core.kinds.MacroF1` against the gold labels of the real rows of packed targets."""

    def update_state(self, y_true: tf.Tensor, y_pred: tf.Tensor, sample_weight: tf.Tensor | None = None) -> None:
        super().update_state(*real_rows(y_true, y_pred, self.num_labels))


def gold_metrics(problem_type: str, width: int) -> list[tf.keras.metrics.Metric]:
    """The metrics a distilled run compiles with, on the real rows: those `core.kinds.metrics` names (single label:
    accuracy, as a run without a teacher)."""
    if problem_type == SINGLE_LABEL:
        return [GoldAccuracy(width)]
    if problem_type == MULTI_LABEL:
        return [GoldMacroF1(width)]
    return []
