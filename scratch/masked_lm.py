"""The masked-language-modelling objective (BERT's): which tokens are hidden and how, the head that guesses them, and
the loss and accuracy on the hidden positions only.

    token ids (B, T) ──mask_tokens──► (inputs (B, T), targets (B, T), 0 where nothing is asked)
    inputs ──the classifier's embedding and encoder blocks──► (B, T, C)
        ──MaskedLanguageModelHead at the N picked positions──► logits (N, V)

`mask_tokens` picks each real token with probability `rate` (never padding, never the pair separator); a picked
token is replaced by the mask id 80% of the time, by a random token 10%, and left as it is 10%, and is a target in
all three cases. The mask id is one past the tokenizer's vocabulary (`mask_id`), so that no text can give it: the
encoder's embedding table has that one extra row.
"""

from __future__ import annotations

import logging
import math
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import tensorflow as tf

from core.training.budget import pass_examples
from core.training.callbacks import ProgressLog, StepBudget
from core.training.log import append_history, training_summary
from scratch.pipeline import grouped_batches, steps_per_epoch
from scratch.schedule import WarmupInverseSqrt, transformer_adamw

if TYPE_CHECKING:
    from scratch.args import ScratchArguments
    from scratch.config import ModelConfig
    from scratch.pretraining import PretrainingArguments

logger = logging.getLogger(__name__)

HISTORY_FILE = "pretraining.jsonl"  # one row per logging period while pretraining
BACKUP_DIR = "pretraining_backup"  # the pretraining's BackupAndRestore, until the run is finished
OBJECTIVE = "masked language modelling (BERT's 80/10/10 mask/random/keep)"

MASK_SHARE, RANDOM_SHARE = 0.8, 0.1  # of the picked tokens; the rest are kept as they are


def mask_id(vocabulary_size: int) -> int:
    """The mask token's id: one past the tokenizer's vocabulary, an id no text gives."""
    return vocabulary_size


def mask_tokens(
    ids: tf.Tensor,
    rate: float,
    vocabulary_size: int,
    unknown_id: int,
    separator_id: int | None = None,
    seed: int | None = None,
) -> tuple[tf.Tensor, tf.Tensor]:
    """BERT's masking of a batch of token ids (B, T), padded with 0.

    Returns:
        (the inputs (B, T): picked tokens replaced by the mask id 80% of the time and by a random token of the
        vocabulary 10% of the time; the targets (B, T): the original id at every picked position, 0 elsewhere).
    """
    real = ids > 0  # (B, T)
    if separator_id is not None:
        real = tf.logical_and(real, ids != separator_id)
    picked = tf.logical_and(real, tf.random.uniform(tf.shape(ids), seed=seed) < rate)  # (B, T)
    roll = tf.random.uniform(tf.shape(ids), seed=None if seed is None else seed + 1)  # (B, T)
    masked = tf.logical_and(picked, roll < MASK_SHARE)
    randomised = tf.logical_and(picked, tf.logical_and(roll >= MASK_SHARE, roll < MASK_SHARE + RANDOM_SHARE))
    random_ids = tf.random.uniform(tf.shape(ids), 1, vocabulary_size, dtype=ids.dtype)  # (B, T), never padding
    if separator_id is not None:  # a random separator would start a second segment
        random_ids = tf.where(random_ids == separator_id, tf.cast(unknown_id, ids.dtype), random_ids)
    inputs = tf.where(masked, tf.cast(mask_id(vocabulary_size), ids.dtype), tf.where(randomised, random_ids, ids))
    targets = tf.where(picked, ids, tf.zeros_like(ids))
    return inputs, targets


def picked_targets(targets: tf.Tensor) -> tf.Tensor:
    """The ids asked for, (N,), in the order of `MaskedLanguageModelHead`'s logits: targets (B, T) > 0, row-major."""
    targets = tf.cast(targets, tf.int64)
    return tf.boolean_mask(targets, targets > 0)


def masked_lm_loss(targets: tf.Tensor, logits: tf.Tensor) -> tf.Tensor:
    """Mean cross-entropy over the picked positions of a batch: targets (B, T), 0 where nothing is asked; logits
    (N, V) of the N picked positions (`MaskedLanguageModelHead`)."""
    losses = tf.keras.losses.sparse_categorical_crossentropy(picked_targets(targets), logits, from_logits=True)  # (N,)
    return tf.reduce_sum(losses) / tf.maximum(tf.cast(tf.size(losses), tf.float32), 1.0)


def masked_accuracy(targets: tf.Tensor, logits: tf.Tensor) -> tf.Tensor:
    """The share of picked positions whose token the head ranks first (arguments as `masked_lm_loss`)."""
    right = tf.cast(tf.argmax(logits, axis=-1) == picked_targets(targets), tf.float32)  # (N,)
    return tf.reduce_sum(right) / tf.maximum(tf.cast(tf.size(right), tf.float32), 1.0)


@tf.keras.saving.register_keras_serializable(package="scratch")
class MaskedLanguageModelHead(tf.keras.layers.Layer):
    """BERT's prediction head at the picked positions only: a dense transform with GELU, LayerNorm, then logits over
    the vocabulary (its own output projection, not tied to the token embedding). Projecting the picked positions
    alone (15%) rather than every position spares most of the pretraining's largest matrix product.

    Args:
        vocab_size: the logits per position (the tokenizer's vocabulary; the mask id is never a target).
        layer_norm_epsilon: epsilon of the LayerNorm.

    Call args:
        inputs: the encoder's output (B, T, C).
        targets: (B, T) ids, 0 where nothing is asked (`mask_tokens`); the logits are those of the other positions,
            in row-major order.
    Returns:
        logits (N, V) for the N picked positions of the batch.
    """

    def __init__(self, vocab_size: int, layer_norm_epsilon: float = 1e-5, **kwargs):
        super().__init__(**kwargs)
        self.vocab_size = vocab_size
        self.layer_norm_epsilon = layer_norm_epsilon
        self.supports_masking = True

    def build(self, input_shape):
        d_model = input_shape[-1]
        hidden = tf.TensorShape([None, d_model])
        self.transform = tf.keras.layers.Dense(d_model, activation="gelu", name="transform")
        self.transform.build(hidden)
        self.norm = tf.keras.layers.LayerNormalization(epsilon=self.layer_norm_epsilon, name="norm")
        self.norm.build(hidden)
        self.output_projection = tf.keras.layers.Dense(self.vocab_size, dtype="float32", name="output_projection")
        self.output_projection.build(hidden)
        super().build(input_shape)

    def call(self, inputs: tf.Tensor, targets: tf.Tensor, mask: tf.Tensor | None = None) -> tf.Tensor:
        picked = tf.boolean_mask(inputs, targets > 0)  # (N, C)
        return self.output_projection(self.norm(self.transform(picked)))  # (N, V)

    def compute_mask(self, inputs, mask=None):
        return None  # the padding mask has no meaning for the picked positions

    def compute_output_shape(self, input_shape):
        return tf.TensorShape([None, self.vocab_size])

    def get_config(self):
        return {**super().get_config(), "vocab_size": self.vocab_size, "layer_norm_epsilon": self.layer_norm_epsilon}


def build_masked_lm(classifier: tf.keras.Model, config: ModelConfig, vocabulary_size: int) -> tf.keras.Model:
    """[masked token ids (B, T), targets (B, T)] -> logits (N, vocabulary_size) at the N picked positions, through
    the classifier's own embedding and encoder blocks (the same layers, so what pretraining learns is the
    classifier's) and a `MaskedLanguageModelHead`."""
    token_ids = tf.keras.Input(shape=(None,), dtype=tf.int64, name="token_ids")  # (B, T)
    targets = tf.keras.Input(shape=(None,), dtype=tf.int64, name="targets")  # (B, T)
    x = classifier.get_layer("embedding")(token_ids)  # (B, T, C), with the padding mask
    for i in range(config.num_layers):
        x = classifier.get_layer(f"encoder_{i}")(x)  # (B, T, C)
    if config.norm == "pre":
        x = classifier.get_layer("final_norm")(x)  # (B, T, C)
    logits = MaskedLanguageModelHead(vocabulary_size, name="masked_lm_head")(x, targets)  # (N, V)
    return tf.keras.Model([token_ids, targets], logits, name="masked_lm")


def masked_batches(
    ids: list[np.ndarray],
    tokenizer: tf.keras.layers.Layer,
    batch_size: int,
    max_length: int,
    rate: float,
    seed: int,
) -> tf.data.Dataset:
    """An endless stream of length-grouped batches of ((masked inputs (B, T), targets (B, T)), targets), masked
    anew each pass (RoBERTa's dynamic masking): the head reads the targets to pick its positions, the loss to score
    them."""
    vocabulary = len(tokenizer.vocabulary)
    batches = grouped_batches(ids, np.zeros(len(ids), np.float32), batch_size, max_length, seed).repeat()

    def masked(batch: tf.Tensor, _) -> tuple[tuple[tf.Tensor, tf.Tensor], tf.Tensor]:
        inputs, targets = mask_tokens(batch, rate, vocabulary, tokenizer.unknown_id, tokenizer.separator_id, seed)
        return (inputs, targets), targets

    return batches.map(masked)


class PretrainingLog(tf.keras.callbacks.Callback):
    """Appends one row per logging period to `path` (JSON lines, read back by `core.training.log.read_history`):
    `epoch` (the period, from 1), `loss` (masked-LM), `masked_accuracy`, `train_seconds`, `steps` (optimizer steps
    so far, resumed ones included) and `examples` (`examples(first_step, last_step)`)."""

    def __init__(self, path: Path, examples: Callable[[int, int], int]) -> None:
        super().__init__()
        self.path, self.examples = Path(path), examples

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        self.start, self.steps_before = time.perf_counter(), int(self.model.optimizer.iterations.numpy())

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        logs, steps = logs or {}, int(self.model.optimizer.iterations.numpy())
        row = {
            "epoch": epoch + 1,
            "loss": float(logs["loss"]),
            "masked_accuracy": float(logs["masked_accuracy"]),
            "train_seconds": round(time.perf_counter() - self.start, 3),
            "steps": steps,
            "examples": self.examples(self.steps_before, steps),
        }
        append_history(self.path, row)


def pretrain(
    classifier: tf.keras.Model,
    config: ModelConfig,
    tokenizer: tf.keras.layers.Layer,
    ids: list[np.ndarray],
    run_dir: Path,
    args: ScratchArguments,
    options: PretrainingArguments,
    steps: int,
    seed: int,
    callbacks: Sequence[tf.keras.callbacks.Callback] = (),
) -> dict[str, Any]:
    """Trains the classifier's encoder with masked language modelling on `ids` (the corpus' token ids) for `steps`
    optimizer steps, continuing the backup in `run_dir` if there is one; returns the pretraining's record (without
    the corpus' description). `callbacks` run first (a test's interruption)."""
    model = build_masked_lm(classifier, config, len(tokenizer.vocabulary))
    warmup = max(1, math.ceil(args.warmup_ratio * steps)) if args.warmup_steps is None else args.warmup_steps
    optimizer = transformer_adamw(WarmupInverseSqrt(args.learning_rate, warmup), args.weight_decay, args.clip_norm)
    model.compile(optimizer=optimizer, loss=masked_lm_loss, metrics=[masked_accuracy])
    period = min(options.pretrain_log_steps, steps)
    periods = math.ceil(steps / period)
    pass_steps = steps_per_epoch(ids, args.batch_size, tokenizer.max_length)
    batches = masked_batches(ids, tokenizer, args.batch_size, tokenizer.max_length, options.mask_rate, seed)
    logger.info(
        "Pretraining with masked language modelling: %d steps on %d texts (%.1f passes)",
        steps,
        len(ids),
        steps / pass_steps,
    )
    model.fit(
        batches,
        epochs=periods,
        steps_per_epoch=period,
        callbacks=[
            *callbacks,
            StepBudget(steps),
            PretrainingLog(run_dir / HISTORY_FILE, pass_examples(len(ids), pass_steps, args.batch_size)),
            # kept after pretraining ends: a run interrupted while fine-tuning finds its pretraining done
            tf.keras.callbacks.BackupAndRestore(backup_dir=str(run_dir / BACKUP_DIR), delete_checkpoint=False),
            ProgressLog(steps, "masked_accuracy"),
        ],
        verbose=0,
    )
    summary = training_summary(run_dir / HISTORY_FILE, monitor="loss", mode="min")
    last = summary["history"][-1] if summary["history"] else {}
    logger.info(
        "Pretraining ended after %d steps: masked-LM loss %.4f, masked accuracy %.4f",
        summary["steps"],
        last.get("loss", float("nan")),
        last.get("masked_accuracy", float("nan")),
    )
    return {
        "objective": OBJECTIVE,
        "mask_rate": options.mask_rate,
        "planned_steps": steps,
        "steps": summary["steps"],
        "seconds": summary["seconds"],
        "history": summary["history"],
    }


def remove_pretraining_state(run_dir: Path) -> None:
    """Deletes the pretraining's backup once the run's model is saved."""
    shutil.rmtree(Path(run_dir) / BACKUP_DIR, ignore_errors=True)
