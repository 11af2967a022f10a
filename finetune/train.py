"""Training: the model for the task's labels, compiled with warmup + AdamW, and Keras `fit` with the shared callbacks.

The callbacks (`core.callbacks`): progress lines, the run's `history.jsonl` training log, TensorBoard logs,
early stopping on validation accuracy with the best weights restored, and `BackupAndRestore` into the
unfinished run directory, so `--resume` continues after an interruption.
"""

from __future__ import annotations

import logging
import math

import tensorflow as tf

from finetune.args import FinetuneArguments
from finetune.checkpoint import Checkpoint, load_for_task

logger = logging.getLogger(__name__)


def build_model(checkpoint: Checkpoint, labels: list[str], args: FinetuneArguments, total_steps: int) -> tf.keras.Model:
    """The classifier, compiled with AdamW (decoupled weight decay, linear warmup then linear decay).

    Call inside the distribution strategy's scope.
    """
    from transformers import create_optimizer

    model = load_for_task(checkpoint, labels, args.pooling)
    warmup = math.ceil(args.warmup_ratio * total_steps)
    optimizer, _ = create_optimizer(
        init_lr=args.learning_rate,
        num_train_steps=total_steps,
        num_warmup_steps=warmup,
        weight_decay_rate=args.weight_decay,
    )
    logger.info("AdamW: peak learning rate %g, %d steps, %d of them warmup", args.learning_rate, total_steps, warmup)
    model.compile(
        optimizer=optimizer,
        loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=[tf.keras.metrics.SparseCategoricalAccuracy(name="accuracy")],
    )
    return model
