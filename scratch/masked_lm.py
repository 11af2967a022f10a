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
from core.training.callbacks import ProgressLog, StepBudget, TimeBudget
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


VALIDATION_TEXTS = 2000  # the validation texts the masked-LM model is scored on at most (a seeded sample)


def validation_masks(
    ids: Sequence[np.ndarray], rate: float, vocabulary_size: int, separator_id: int | None, seed: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    """The validation texts' (inputs, targets), masked once with `mask_tokens`' 80/10/10 rule and a seeded generator,
    so that every validation scores the same positions; a text the draw left without a picked piece gets its middle
    one picked (a batch of short texts would otherwise ask nothing)."""
    rng = np.random.default_rng(seed)
    masked = []
    for text in ids:
        text = np.asarray(text, np.int64)
        real = (text > 0) & (text != (separator_id if separator_id is not None else -1))
        picked = real & (rng.random(len(text)) < rate)
        if real.any() and not picked.any():
            candidates = np.flatnonzero(real)
            picked[candidates[len(candidates) // 2]] = True
        roll = rng.random(len(text))
        random_ids = rng.integers(1, vocabulary_size, len(text))
        if separator_id is not None:
            random_ids[random_ids == separator_id] = 1
        inputs = np.where(picked & (roll < MASK_SHARE), mask_id(vocabulary_size), text)
        inputs = np.where(picked & (roll >= MASK_SHARE) & (roll < MASK_SHARE + RANDOM_SHARE), random_ids, inputs)
        masked.append((inputs, np.where(picked, text, 0)))
    return masked


class MaskedValidation(tf.keras.callbacks.Callback):
    """Scores the masked-LM model on fixed validation masks (`validation_masks`) after every logging period and puts
    into its logs `val_loss` (mean cross-entropy over the picked pieces), `val_masked_accuracy` and
    `val_loss_drop_se`: the standard error of the loss's fall since the previous validation, paired over the same
    pieces (the noise `compare.diagnosis` holds that fall against; absent at the first validation)."""

    def __init__(self, masked: list[tuple[np.ndarray, np.ndarray]], batch_size: int) -> None:
        super().__init__()
        self.batches = []
        for start in range(0, len(masked), batch_size):
            chunk = masked[start : start + batch_size]
            width = max(len(inputs) for inputs, _ in chunk)
            inputs = np.zeros((len(chunk), width), np.int64)  # (B, T), padded with 0
            targets = np.zeros((len(chunk), width), np.int64)  # (B, T)
            for row, (text, target) in enumerate(chunk):
                inputs[row, : len(text)], targets[row, : len(target)] = text, target
            self.batches.append((tf.constant(inputs), tf.constant(targets)))
        self.previous: np.ndarray | None = None

    def losses(self) -> tuple[np.ndarray, np.ndarray]:
        """(cross-entropy, whether ranked first) of every picked validation piece, (N,) each."""
        losses, right = [], []
        for inputs, targets in self.batches:
            logits = self.model([inputs, targets], training=False)  # (N_batch, V)
            picked = picked_targets(targets)
            losses.append(tf.keras.losses.sparse_categorical_crossentropy(picked, logits, from_logits=True).numpy())
            right.append((tf.argmax(logits, axis=-1) == picked).numpy())
        return np.concatenate(losses), np.concatenate(right)

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        if logs is None or not self.batches:
            return
        losses, right = self.losses()
        logs["val_loss"], logs["val_masked_accuracy"] = float(losses.mean()), float(right.mean())
        if self.previous is not None and len(self.previous) == len(losses):
            drops = self.previous - losses  # (N,), paired over the same pieces
            logs["val_loss_drop_se"] = float(drops.std(ddof=1) / np.sqrt(len(drops))) if len(drops) > 1 else 0.0
        self.previous = losses


class PretrainingLog(tf.keras.callbacks.Callback):
    """Appends one row per logging period to `path` (JSON lines, read back by `core.training.log.read_history`):
    `epoch` (the period, from 1), `loss` (masked-LM, on the training batches), `masked_accuracy`, the validation's
    `val_loss`, `val_masked_accuracy` and `val_loss_drop_se` (`MaskedValidation`), `train_seconds`,
    `elapsed_seconds` (the clock's, resumed sessions included), `steps` (optimizer steps so far, resumed ones
    included) and `examples` (`examples(first_step, last_step)`)."""

    def __init__(self, path: Path, examples: Callable[[int, int], int], clock: TimeBudget) -> None:
        super().__init__()
        self.path, self.examples, self.clock = Path(path), examples, clock

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        self.start, self.steps_before = time.perf_counter(), int(self.model.optimizer.iterations.numpy())

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        logs, steps = logs or {}, int(self.model.optimizer.iterations.numpy())
        row = {
            "epoch": epoch + 1,
            "loss": float(logs["loss"]),
            "masked_accuracy": float(logs["masked_accuracy"]),
            **{key: float(logs[key]) for key in VALIDATION_KEYS if key in logs},
            "train_seconds": round(time.perf_counter() - self.start, 3),
            "elapsed_seconds": round(self.clock.elapsed(), 3),
            "steps": steps,
            "examples": self.examples(self.steps_before, steps),
        }
        if self.clock.reached:
            row["stop_reason"] = self.clock.reason
        append_history(self.path, row)


VALIDATION_KEYS = ("val_loss", "val_masked_accuracy", "val_loss_drop_se")


def pretrain(
    classifier: tf.keras.Model,
    config: ModelConfig,
    tokenizer: tf.keras.layers.Layer,
    ids: list[np.ndarray],
    validation_ids: list[np.ndarray],
    run_dir: Path,
    args: ScratchArguments,
    options: PretrainingArguments,
    seed: int,
    callbacks: Sequence[tf.keras.callbacks.Callback] = (),
) -> dict[str, Any]:
    """Trains the classifier's encoder with masked language modelling on `ids` (the corpus' token ids) for its
    budget (`options`: passes or steps, and minutes), validated on `validation_ids` (a seeded sample of at most
    `VALIDATION_TEXTS`), continuing the backup in `run_dir` if there is one; returns the pretraining's record (without
    the corpus' description). `callbacks` run first (a test's interruption)."""
    model = build_masked_lm(classifier, config, len(tokenizer.vocabulary))
    pass_steps = steps_per_epoch(ids, args.batch_size, tokenizer.max_length)
    steps = options.planned_steps(pass_steps)
    warmup = max(1, math.ceil(args.warmup_ratio * steps)) if args.warmup_steps is None else args.warmup_steps
    optimizer = transformer_adamw(WarmupInverseSqrt(args.learning_rate, warmup), args.weight_decay, args.clip_norm)
    model.compile(optimizer=optimizer, loss=masked_lm_loss, metrics=[masked_accuracy])
    period = min(options.pretrain_log_steps, steps)
    batches = masked_batches(ids, tokenizer, args.batch_size, tokenizer.max_length, options.mask_rate, seed)
    sample = np.random.default_rng(seed).permutation(len(validation_ids))[:VALIDATION_TEXTS]
    masked = validation_masks(
        [validation_ids[i] for i in np.sort(sample)],
        options.mask_rate,
        len(tokenizer.vocabulary),
        tokenizer.separator_id,
        seed,
    )
    minutes = options.pretrain_time_budget
    clock = TimeBudget(minutes * 60 if minutes else None, run_dir / HISTORY_FILE)
    logger.info(
        "Pretraining with masked language modelling: %d steps on %d texts (%.1f passes)%s, validated on %d texts "
        "every %d steps",
        steps,
        len(ids),
        steps / pass_steps,
        f" or {minutes:g} minutes" if minutes else "",
        len(masked),
        period,
    )
    model.fit(
        batches,
        epochs=math.ceil(steps / period),
        steps_per_epoch=period,
        callbacks=[
            *callbacks,
            StepBudget(steps),
            clock,
            MaskedValidation(masked, args.batch_size),
            PretrainingLog(run_dir / HISTORY_FILE, pass_examples(len(ids), pass_steps, args.batch_size), clock),
            # kept after pretraining ends: a run interrupted while fine-tuning finds its pretraining done
            tf.keras.callbacks.BackupAndRestore(backup_dir=str(run_dir / BACKUP_DIR), delete_checkpoint=False),
            ProgressLog(steps, "val_masked_accuracy", clock=clock),
        ],
        verbose=0,
    )
    summary = training_summary(run_dir / HISTORY_FILE, monitor="val_loss", mode="min")
    last = summary["history"][-1] if summary["history"] else {}
    logger.info(
        "Pretraining ended after %d steps (%.2f passes): masked-LM validation loss %.4f, masked accuracy %.4f",
        summary["steps"],
        summary["steps"] / pass_steps,
        last.get("val_loss", float("nan")),
        last.get("val_masked_accuracy", float("nan")),
    )
    return {
        "objective": OBJECTIVE,
        "mask_rate": options.mask_rate,
        "planned_steps": steps,
        "steps": summary["steps"],
        "seconds": summary["seconds"],
        "passes": summary["steps"] / pass_steps,
        "stop_reason": "time" if any(row.get("stop_reason") == "time" for row in summary["history"]) else "budget",
        "budget": {"epochs": options.pretrain_epochs, "steps": options.pretrain_steps, "time_budget_minutes": minutes},
        "validation_texts": len(masked),
        "history": summary["history"],
    }


def remove_pretraining_state(run_dir: Path) -> None:
    """Deletes the pretraining's backup once the run's model is saved."""
    shutil.rmtree(Path(run_dir) / BACKUP_DIR, ignore_errors=True)
