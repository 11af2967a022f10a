"""The distillation loss (Hinton et al. 2015) for every kind of task, and the gold-label metrics that training
reports beside it.

Keras hands a loss one target tensor, so each row's targets are packed side by side (`pack_targets`), G being the
columns of the kind's own targets (1 for class ids and values, L for multi-hot rows) and D the model's outputs per
example (classes, labels, or 1 for regression):

    [ gold targets (G) | teacher's soft targets (D) | 1 for a real row, 0 for an augmented one ]   (B, G + D + 1)

Per row, with A the gold weight and T the temperature:

    A * the kind's own loss (`Kind.loss`) + (1 - A) * the teacher's term (`scratch.distill.kinds`):
    single label:  T^2 * KL(softmax(teacher / T) || softmax(model / T))
    multi-label:   per label T^2 * KL(sigmoid(teacher / T) || sigmoid(model / T)), averaged over labels
    regression:    (model - teacher)^2

An augmented row has no gold target and pays only the teacher's term. The T^2 keeps the soft term's gradients on
the scale of the hard term's whatever the temperature. The teacher's soft targets are what `DistilledKind.soft_targets`
makes of its outputs: log-probabilities (softmax(log p / T) is the teacher's tempered softmax), log-odds (the
logits of its independent probabilities) or values.

Targets of the gold alone, the validation split's, give the kind's own loss, so that a distilled run's `val_loss` is
the one a run without a teacher reports.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from core import kinds
from core.kinds import Kind
from scratch.distill.kinds import distilled


def pack_targets(gold: np.ndarray, teacher: np.ndarray) -> np.ndarray:
    """(n, G + D + 1) targets from the gold targets of the first rows in the kind's form, (r,) or (r, G) (r <= n),
    and the teacher's soft targets of every row, (n, D): the rows after the first r are augmented."""
    teacher = np.asarray(teacher, np.float32).reshape(len(teacher), -1)  # (n, D)
    gold = np.asarray(gold, np.float32).reshape(len(gold), -1)  # (r, G)
    padded = np.zeros((len(teacher), gold.shape[1]), np.float32)  # (n, G)
    padded[: len(gold)] = gold
    real = (np.arange(len(teacher)) < len(gold)).astype(np.float32)[:, None]  # (n, 1)
    return np.concatenate([padded, teacher, real], axis=1)


def is_packed(y_true: tf.Tensor, width: int) -> bool:
    """Whether targets are packed (B, G + D + 1), rather than the gold alone: (B,), or (B, L) multi-hot."""
    return y_true.shape.rank == 2 and y_true.shape[-1] > width


def unpack(y_true: tf.Tensor, width: int) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """(gold (B, G), teacher (B, D), real (B,)) from packed targets (B, G + D + 1)."""
    return y_true[:, : -width - 1], y_true[:, -width - 1 : -1], y_true[:, -1]


class DistillationLoss(tf.keras.losses.Loss):
    """The distillation loss of the module docstring for one kind of task.

    Args:
        kind: the task's kind (`core.kinds`), or its name.
        width: D, the model's outputs per example.
        weight: A in [0, 1]; 1 is training on gold targets alone, 0 on the teacher alone.
        temperature: T > 0 (not used for regression).
        label_smoothing: of the gold term where the kind smooths labels (single label), as without a teacher.
    """

    def __init__(
        self,
        kind: Kind | str,
        width: int,
        weight: float,
        temperature: float,
        label_smoothing: float = 0.0,
        **kwargs,
    ) -> None:
        super().__init__(name=kwargs.pop("name", "distillation"), **kwargs)
        self.kind = kinds.get(kind) if isinstance(kind, str) else kind
        self.width = width
        self.weight = weight
        self.temperature = temperature
        self.label_smoothing = label_smoothing
        self.gold = self.kind.loss(label_smoothing if self.kind.smooths_labels else 0.0)

    def call(self, y_true: tf.Tensor, y_pred: tf.Tensor) -> tf.Tensor:
        y_true, logits = tf.cast(y_true, tf.float32), tf.cast(y_pred, tf.float32)  # (B, G + D + 1) or gold; (B, D)
        if not is_packed(y_true, self.width):  # the gold alone
            return self.gold_loss(y_true, logits)
        gold, teacher, real = unpack(y_true, self.width)
        return real * self.weight * self.gold_loss(gold, logits) + (1.0 - self.weight) * self.teacher_loss(
            teacher, logits
        )  # (B,)

    def gold_loss(self, gold: tf.Tensor, logits: tf.Tensor) -> tf.Tensor:
        """The kind's own loss per row (B,), from gold targets in the kind's form and logits (B, D)."""
        return self.gold.call(gold, logits)

    def teacher_loss(self, teacher: tf.Tensor, logits: tf.Tensor) -> tf.Tensor:
        """The teacher's term per row (B,) (`scratch.distill.kinds`)."""
        return distilled(self.kind).teacher_loss(teacher, logits, self.temperature)

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "kind": self.kind.name,
            "width": self.width,
            "weight": self.weight,
            "temperature": self.temperature,
            "label_smoothing": self.label_smoothing,
        }


def real_rows(y_true: tf.Tensor, y_pred: tf.Tensor, width: int) -> tuple[tf.Tensor, tf.Tensor]:
    """The gold targets and the outputs of the rows that have gold targets: of packed targets, the real rows; of
    targets of the gold alone (the validation split's), every row."""
    if not is_packed(y_true, width):
        return y_true, y_pred
    gold, _, real = unpack(tf.cast(y_true, tf.float32), width)
    return tf.boolean_mask(gold, real > 0), tf.boolean_mask(y_pred, real > 0)


class OnGold(tf.keras.metrics.Metric):
    """A kind's metric (`Kind.metrics`) against the gold targets of the real rows of packed targets; augmented rows
    have none. It takes the metric's name, so a distilled run logs what a run without a teacher logs.

    Args:
        metric: the metric, computed on the real rows.
        width: D, the model's outputs per example.
    """

    def __init__(self, metric: tf.keras.metrics.Metric, width: int, **kwargs) -> None:
        super().__init__(name=kwargs.pop("name", metric.name), **kwargs)
        self.metric, self.width = metric, width

    def update_state(self, y_true: tf.Tensor, y_pred: tf.Tensor, sample_weight: tf.Tensor | None = None) -> None:
        self.metric.update_state(*real_rows(y_true, y_pred, self.width))

    def result(self) -> tf.Tensor:
        return self.metric.result()

    def reset_state(self) -> None:
        self.metric.reset_state()

    def get_config(self) -> dict:
        return {**super().get_config(), "metric": tf.keras.metrics.serialize(self.metric), "width": self.width}

    @classmethod
    def from_config(cls, config: dict) -> OnGold:
        config = dict(config)
        return cls(tf.keras.metrics.deserialize(config.pop("metric")), **config)


def gold_metrics(kind: Kind, width: int) -> list[tf.keras.metrics.Metric]:
    """The metrics a distilled run compiles with, on the real rows: the kind's own (`Kind.metrics`)."""
    return [OnGold(metric, width) for metric in kind.metrics(width)]
