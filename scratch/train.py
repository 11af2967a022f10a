"""Training: AdamW under the warmup / inverse-square-root schedule, and Keras `fit` with the shared callbacks.

The callbacks (`core.callbacks`): progress lines, the run's `history.jsonl` training log, TensorBoard logs,
the `--max-steps` budget, early stopping on the task's headline validation score (`core.kinds.monitor`) with the
best weights restored, and `BackupAndRestore` into the unfinished run directory, so `--resume` continues after an
interruption.
"""

from __future__ import annotations

import logging

import tensorflow as tf

from core import kinds
from core.tasks import SINGLE_LABEL
from scratch.args import ScratchArguments
from scratch.schedule import WarmupInverseSqrt, transformer_adamw

logger = logging.getLogger(__name__)


def compile_classifier(
    classifier: tf.keras.Model,
    args: ScratchArguments,
    warmup_steps: int,
    problem_type: str = SINGLE_LABEL,
    loss: tf.keras.losses.Loss | None = None,
    metrics: list[tf.keras.metrics.Metric] | None = None,
) -> None:
    """AdamW under the warmup / inverse-square-root schedule, clipped gradients, and the problem type's loss.

    Single label: cross-entropy smoothed by `--label-smoothing` against one-hot targets, with accuracy; the other
    kinds: `core.kinds.loss` and `core.kinds.metrics`. `loss` and `metrics` replace them (a distilled run's).
    """
    logger.info("AdamW: peak learning rate %g after %d warmup steps", args.learning_rate, warmup_steps)
    optimizer = transformer_adamw(
        WarmupInverseSqrt(args.learning_rate, warmup_steps), args.weight_decay, args.clip_norm
    )
    if problem_type == SINGLE_LABEL:
        default_loss = tf.keras.losses.CategoricalCrossentropy(from_logits=True, label_smoothing=args.label_smoothing)
        default_metrics = [tf.keras.metrics.CategoricalAccuracy(name="accuracy")]
    else:
        default_loss, default_metrics = (
            kinds.loss(problem_type),
            kinds.metrics(problem_type, classifier.output_shape[-1]),
        )
    classifier.compile(
        optimizer=optimizer,
        loss=loss or default_loss,
        metrics=default_metrics if metrics is None else metrics,
    )
