"""Training: the model for the task's labels and kind, compiled with warmup + AdamW and the kind's loss and metrics
(`core.kinds`), and Keras `fit` with the shared callbacks.

The callbacks (`core.callbacks`): progress lines, the run's `history.jsonl` training log, TensorBoard logs,
early stopping on the validation headline (`val_accuracy`, `val_macro_f1`, `val_spearman`) with the best weights
restored, and `BackupAndRestore` into the unfinished run directory, so `--resume` continues after an interruption.
"""

from __future__ import annotations

import logging
import math

import tensorflow as tf

from core import kinds
from core.tasks import SINGLE_LABEL
from finetune.args import FinetuneArguments
from finetune.checkpoint import Checkpoint, load_for_task

logger = logging.getLogger(__name__)


def build_model(
    checkpoint: Checkpoint,
    labels: list[str],
    args: FinetuneArguments,
    total_steps: int,
    problem_type: str = SINGLE_LABEL,
) -> tf.keras.Model:
    """The model for `labels` and `problem_type`, compiled with AdamW (decoupled weight decay, linear warmup then
    linear decay) and the kind's loss on its logits.

    Call inside the distribution strategy's scope.
    """
    from transformers import create_optimizer

    model = load_for_task(checkpoint, labels, args.pooling, problem_type)
    warmup = math.ceil(args.warmup_ratio * total_steps)
    optimizer, _ = create_optimizer(
        init_lr=args.learning_rate,
        num_train_steps=total_steps,
        num_warmup_steps=warmup,
        weight_decay_rate=args.weight_decay,
    )
    logger.info("AdamW: peak learning rate %g, %d steps, %d of them warmup", args.learning_rate, total_steps, warmup)
    outputs = model.config.num_labels
    model.compile(optimizer=optimizer, loss=kinds.loss(problem_type), metrics=kinds.metrics(problem_type, outputs))
    return model
