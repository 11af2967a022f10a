"""What distillation reads from a teacher of each kind of task: one `DistilledKind` per kind (`core.kinds`),
registered with `register(KindClass)` and found with `distilled(kind)`.

Examples:
    >>> import numpy as np
    >>> from core import kinds
    >>> distilled(kinds.get("regression")).soft_targets(np.array([0.5, 2.0])).tolist()
    [[0.5], [2.0]]
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from core.kinds import MultiLabel, Regression, SingleLabel
from core.kinds.views import KindView, Views


class DistilledKind(KindView):
    """Distillation's view of one kind.

    Attributes:
        soft_targets_name: what the soft targets are (run.json `distillation.soft_targets`).
    """

    soft_targets_name: ClassVar[str] = "log_probabilities"

    def soft_targets(self, outputs: np.ndarray) -> np.ndarray:
        """A teacher's outputs as the distillation loss reads them, (n, D)."""
        raise NotImplementedError

    def teacher_loss(self, teacher: Any, logits: Any, temperature: float) -> Any:
        """The distillation loss's teacher term per row (B,), from soft targets (B, D) and the student's logits (B, D)."""
        raise NotImplementedError


VIEWS: Views[DistilledKind] = Views("distillation", "scratch.distill.kinds")
register = VIEWS.register
distilled = VIEWS.of


@register(SingleLabel)
class DistilledSingleLabel(DistilledKind):
    def soft_targets(self, outputs: np.ndarray) -> np.ndarray:
        """The log of the class probabilities, which differ from the teacher network's logits by a constant per row
        and so give the same tempered softmax."""
        return np.log(np.maximum(outputs, np.finfo(np.float32).tiny))

    def teacher_loss(self, teacher: Any, logits: Any, temperature: float) -> Any:
        """T^2 KL(softmax(teacher / T) || softmax(logits / T))."""
        import tensorflow as tf

        t = temperature
        teacher_log_p = tf.nn.log_softmax(teacher / t, axis=-1)  # (B, K)
        student_log_p = tf.nn.log_softmax(logits / t, axis=-1)  # (B, K)
        return t**2 * tf.reduce_sum(tf.exp(teacher_log_p) * (teacher_log_p - student_log_p), axis=-1)  # (B,)


@register(MultiLabel)
class DistilledMultiLabel(DistilledKind):
    soft_targets_name = "log_odds"

    def soft_targets(self, outputs: np.ndarray) -> np.ndarray:
        """The log-odds of the label probabilities (the teacher network's logits); float64 on the way, so that a
        probability within float32's rounding of 1 keeps its odds."""
        tiny = np.finfo(np.float32).tiny
        outputs = np.asarray(outputs, np.float64)
        return (np.log(np.maximum(outputs, tiny)) - np.log(np.maximum(1.0 - outputs, tiny))).astype(np.float32)

    def teacher_loss(self, teacher: Any, logits: Any, temperature: float) -> Any:
        """T^2 KL(sigmoid(teacher / T) || sigmoid(logits / T)) per label, averaged over the labels."""
        import tensorflow as tf

        t = temperature
        # each label's Bernoulli: log p = log sigmoid(z), log (1 - p) = log sigmoid(-z)
        teacher_p = tf.sigmoid(teacher / t)  # (B, L)
        kl = teacher_p * (tf.math.log_sigmoid(teacher / t) - tf.math.log_sigmoid(logits / t)) + (1 - teacher_p) * (
            tf.math.log_sigmoid(-teacher / t) - tf.math.log_sigmoid(-logits / t)
        )  # (B, L)
        return t**2 * tf.reduce_mean(kl, axis=-1)  # (B,)


@register(Regression)
class DistilledRegression(DistilledKind):
    soft_targets_name = "values"

    def soft_targets(self, outputs: np.ndarray) -> np.ndarray:
        """The teacher's values, (n, 1)."""
        return np.asarray(outputs, np.float32).reshape(-1, 1)

    def teacher_loss(self, teacher: Any, logits: Any, temperature: float) -> Any:
        """The squared distance to the teacher's value (no temperature: values are not softened)."""
        import tensorflow as tf

        return tf.reduce_mean(tf.square(logits - teacher), axis=-1)  # (B,)
