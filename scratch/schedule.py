"""The learning-rate schedule of the original Transformer: linear warmup, then decay as 1/sqrt(step); optionally
a linear cool-down to zero over the last steps of a planned budget. `transformer_adamw` is the optimizer both
from-scratch trainers (classifier and translator) use it with."""

from __future__ import annotations

import tensorflow as tf


@tf.keras.saving.register_keras_serializable(package="scratch")
class WarmupInverseSqrt(tf.keras.optimizers.schedules.LearningRateSchedule):
    """lr(step) = peak * min(step / warmup, sqrt(warmup / step)) * cool(step), counting steps from 1.

    The rate rises linearly to `peak_learning_rate` at `warmup_steps`, then falls as the inverse square root.
    With `cooldown_steps` > 0 and `total_steps`, the last `cooldown_steps` of the `total_steps` scale it further
    by cool(step) = (total_steps - step + 1) / cooldown_steps, a straight line to 0 after the last step (the
    1/sqrt decay leaves the rate at peak * sqrt(warmup / total) otherwise); before them cool(step) = 1.

    >>> schedule = WarmupInverseSqrt(1e-3, warmup_steps=100)
    >>> [round(float(schedule(s)), 6) for s in (0, 49, 99, 399)]
    [1e-05, 0.0005, 0.001, 0.0005]
    >>> cooled = WarmupInverseSqrt(1e-3, warmup_steps=100, total_steps=400, cooldown_steps=100)
    >>> [round(float(cooled(s)), 6) for s in (99, 299, 349, 399, 400)]
    [0.001, 0.000577, 0.000273, 5e-06, 0.0]
    """

    def __init__(self, peak_learning_rate: float, warmup_steps: int, total_steps: int = 0, cooldown_steps: int = 0):
        super().__init__()
        if peak_learning_rate <= 0:
            raise ValueError(f"peak_learning_rate must be positive, got {peak_learning_rate}.")
        if warmup_steps < 1:
            raise ValueError(f"warmup_steps must be at least 1, got {warmup_steps}.")
        if not 0 <= cooldown_steps <= max(total_steps, 0):
            raise ValueError(f"cooldown_steps must be in [0, total_steps={total_steps}], got {cooldown_steps}.")
        self.peak_learning_rate = peak_learning_rate
        self.warmup_steps = warmup_steps
        self.total_steps = total_steps
        self.cooldown_steps = cooldown_steps

    def __call__(self, step):
        step = tf.cast(step, tf.float32) + 1.0  # the optimizer counts from 0
        warmup = tf.cast(self.warmup_steps, tf.float32)
        rate = self.peak_learning_rate * tf.minimum(step / warmup, tf.math.rsqrt(step / warmup))
        if not self.cooldown_steps:
            return rate
        left = (tf.cast(self.total_steps, tf.float32) - step + 1.0) / tf.cast(self.cooldown_steps, tf.float32)
        return rate * tf.clip_by_value(left, 0.0, 1.0)

    def get_config(self):
        return {
            "peak_learning_rate": self.peak_learning_rate,
            "warmup_steps": self.warmup_steps,
            "total_steps": self.total_steps,
            "cooldown_steps": self.cooldown_steps,
        }


NO_DECAY = ["bias", "gamma", "beta"]  # LayerNorm scales and offsets, and biases, are not decayed


def transformer_adamw(
    schedule: WarmupInverseSqrt, weight_decay: float, clip_norm: float
) -> tf.keras.optimizers.Optimizer:
    """AdamW as the original Transformer sets Adam (beta_2 0.98, epsilon 1e-9) under `schedule`, with gradients
    clipped to a global norm of `clip_norm` and no weight decay on biases and LayerNorm parameters."""
    optimizer = tf.keras.optimizers.AdamW(
        learning_rate=schedule, weight_decay=weight_decay, beta_2=0.98, epsilon=1e-9, global_clipnorm=clip_norm
    )
    optimizer.exclude_from_weight_decay(var_names=NO_DECAY)
    return optimizer
