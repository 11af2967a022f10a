"""Training: AdamW under the warmup / inverse-square-root schedule, and Keras `fit` with the shared callbacks.

The callbacks (`core.callbacks`): progress lines, the run's `history.jsonl` training log, TensorBoard logs,
the `--max-steps` budget, early stopping on validation accuracy with the best weights restored, and
`BackupAndRestore` into the unfinished run directory, so `--resume` continues after an interruption.
"""

from __future__ import annotations

import logging

import tensorflow as tf

from scratch.args import ScratchArguments
from scratch.schedule import WarmupInverseSqrt, transformer_adamw

logger = logging.getLogger(__name__)


def compile_classifier(
    classifier: tf.keras.Model,
    args: ScratchArguments,
    warmup_steps: int,
    loss: tf.keras.losses.Loss | None = None,
    accuracy: tf.keras.metrics.Metric | None = None,
) -> None:
    """AdamW under the warmup / inverse-square-root schedule, clipped gradients, smoothed cross-entropy.

    `loss` and `accuracy` replace the cross-entropy and the accuracy metric (a distilled run's, named `accuracy`).
    """
    logger.info("AdamW: peak learning rate %g after %d warmup steps", args.learning_rate, warmup_steps)
    optimizer = transformer_adamw(
        WarmupInverseSqrt(args.learning_rate, warmup_steps), args.weight_decay, args.clip_norm
    )
    classifier.compile(
        optimizer=optimizer,
        loss=loss or tf.keras.losses.CategoricalCrossentropy(from_logits=True, label_smoothing=args.label_smoothing),
        metrics=[accuracy or tf.keras.metrics.CategoricalAccuracy(name="accuracy")],
    )
