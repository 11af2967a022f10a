"""Fine-tuning's learning-rate schedule: linear warmup, then linear decay to 0 at the last step, as transformers'
`create_optimizer` draws it, with a last step the clock may bring forward.

Under `--time-budget` the plan's last step is rarely the one training reaches: a schedule planned for one pass that
the clock stops after a fifth of it never decays, and the weights kept are those of a learning rate still near its
peak. `TimeBudget` therefore calls `end_by` as training goes with the step the clock allows at the pace so far
(validations included), and the warmup and the decay are redrawn over those steps (docs/results.md, "A schedule that
ends with the clock").

Examples:
    >>> schedule = LinearWarmupDecay(1e-3, warmup_ratio=0.1, total_steps=100)
    >>> [round(float(schedule(s)), 6) for s in (0, 5, 10, 55, 100)]
    [0.0, 0.0005, 0.001, 0.0005, 0.0]
    >>> schedule.end_by(60.7); [round(float(schedule(s)), 6) for s in (3, 6, 33, 60)], schedule.last_step
    ([0.0005, 0.001, 0.0005, 0.0], 60)
"""

from __future__ import annotations

import math

import tensorflow as tf


class LinearWarmupDecay(tf.keras.optimizers.schedules.LearningRateSchedule):
    """Linear warmup from 0 to `peak` over the first `warmup_ratio` of the steps, then linear decay to 0 at the
    last step: `create_optimizer`'s `WarmUp` over `PolynomialDecay` (power 1, ending at 0), step for step.

    Args:
        peak: the learning rate at the end of warmup.
        warmup_ratio: the fraction of the steps (rounded up) spent warming up.
        total_steps: the plan's last step; `end_by` may only bring it forward.
    """

    def __init__(self, peak: float, warmup_ratio: float, total_steps: int) -> None:
        super().__init__()
        self.peak, self.warmup_ratio, self.total_steps = peak, warmup_ratio, total_steps
        self._last = tf.Variable(float(total_steps), trainable=False, dtype=tf.float32, name="last_step")
        self._warmup = tf.Variable(float(self.warmup(total_steps)), trainable=False, dtype=tf.float32, name="warmup")

    def warmup(self, last_step: int) -> int:
        """The warmup steps of a schedule ending at `last_step`."""
        return math.ceil(self.warmup_ratio * last_step)

    @property
    def last_step(self) -> int:
        """The step the learning rate reaches 0."""
        return int(self._last.numpy())

    def end_by(self, step: float) -> None:
        """Ends the decay at `step` (rounded down), or at the plan's last step if that comes first."""
        last = max(1, min(self.total_steps, math.floor(step)))
        self._last.assign(float(last))
        self._warmup.assign(float(min(self.warmup(last), last - 1)))

    def __call__(self, step: tf.Tensor) -> tf.Tensor:
        step = tf.cast(step, tf.float32)
        warming = self.peak * step / tf.maximum(self._warmup, 1.0)
        decaying = self.peak * tf.maximum(self._last - step, 0.0) / tf.maximum(self._last - self._warmup, 1.0)
        return tf.where(step < self._warmup, warming, decaying)

    def get_config(self) -> dict:
        return {"peak": self.peak, "warmup_ratio": self.warmup_ratio, "total_steps": self.total_steps}


def schedule_of(optimizer: tf.keras.optimizers.Optimizer) -> object:
    """`optimizer`'s learning rate as it was given: a legacy Keras optimizer (transformers' `AdamWeightDecay`) returns
    its schedule as `learning_rate`, a current one the rate of its step there and the schedule as `_learning_rate`."""
    return getattr(optimizer, "_learning_rate", optimizer.learning_rate)
