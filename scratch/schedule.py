"""The learning-rate schedule of the original Transformer: linear warmup, then decay as 1/sqrt(step)."""

from __future__ import annotations

import tensorflow as tf


@tf.keras.saving.register_keras_serializable(package="scratch")
class WarmupInverseSqrt(tf.keras.optimizers.schedules.LearningRateSchedule):
    """lr(step) = peak * min(step / warmup, sqrt(warmup / step)), counting steps from 1.

    The rate rises linearly to `peak_learning_rate` at `warmup_steps`, then falls as the inverse square root.

    >>> schedule = WarmupInverseSqrt(1e-3, warmup_steps=100)
    >>> [round(float(schedule(s)), 6) for s in (0, 49, 99, 399)]
    [1e-05, 0.0005, 0.001, 0.0005]
    """

    def __init__(self, peak_learning_rate: float, warmup_steps: int):
        super().__init__()
        if peak_learning_rate <= 0:
            raise ValueError(f"peak_learning_rate must be positive, got {peak_learning_rate}.")
        if warmup_steps < 1:
            raise ValueError(f"warmup_steps must be at least 1, got {warmup_steps}.")
        self.peak_learning_rate = peak_learning_rate
        self.warmup_steps = warmup_steps

    def __call__(self, step):
        step = tf.cast(step, tf.float32) + 1.0  # the optimizer counts from 0
        warmup = tf.cast(self.warmup_steps, tf.float32)
        return self.peak_learning_rate * tf.minimum(step / warmup, tf.math.rsqrt(step / warmup))

    def get_config(self):
        return {"peak_learning_rate": self.peak_learning_rate, "warmup_steps": self.warmup_steps}
