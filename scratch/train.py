"""Trains the from-scratch Transformer on a task and writes a finished run directory.

The stages, in `train` order: load the shared splits, build the tokenizer on train, tokenise once, group
texts of similar length into batches padded to their own length, fit with AdamW under the warmup /
inverse-square-root schedule, keep the best validation epoch, save one end-to-end `.keras` model that
takes raw strings, and write `run.json` and the model card.
"""

from __future__ import annotations

import csv
import dataclasses
import logging
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import tensorflow as tf
from sklearn.metrics import accuracy_score, f1_score

from core.args import DataArguments, RunArguments, parse_args
from core.data import DataError, TaskData, load_task
from core.epoch_time import EPOCH_SECONDS, EpochSeconds, training_seconds
from core.rundir import finish_run, start_run, write_run_json
from core.runtime import make_strategy, set_seed
from scratch.args import ScratchArguments
from scratch.card import write_card
from scratch.model import ModelConfig, build_classifier, build_end_to_end
from scratch.schedule import WarmupInverseSqrt
from scratch.tokenizer import make_tokenizer

logger = logging.getLogger(__name__)

MODEL_FILE = "model.keras"
HISTORY_FILE = "history.csv"
BACKUP_DIR = "backup"
LOG_DIR = "logs"
NO_DECAY = ["bias", "gamma", "beta"]  # LayerNorm scales and offsets, and biases, are not decayed


def main(argv: list[str] | None = None) -> Path:
    """`python -m scratch ...`: parses the options, trains, and returns the finished run directory."""
    data_args, run_args, args = parse_args((DataArguments, RunArguments, ScratchArguments), argv)
    return train(data_args, run_args, args)


def train(data_args: DataArguments, run_args: RunArguments, args: ScratchArguments) -> Path:
    set_seed(data_args.seed)
    data = load_task(data_args)
    check_splits(data)
    config = args.model_config(num_labels=len(data.labels))
    strategy = make_strategy(run_args.strategy)
    partial = start_run(run_args.output_dir, overwrite=run_args.overwrite, resume=run_args.resume)

    tokenizer = make_tokenizer(config.tokenizer, data.texts("train"), config.vocab_size, data_args.max_length)
    train_ids, validation_ids = tokenize(tokenizer, data.texts("train")), tokenize(tokenizer, data.texts("validation"))
    logger.info(
        "Vocabulary %d tokens; train texts average %.1f tokens", len(tokenizer.vocabulary), _mean_len(train_ids)
    )
    train_batches = length_grouped_batches(
        train_ids, data.label_ids("train"), len(data.labels), args.batch_size, data_args.max_length, data_args.seed
    )
    validation_batches = length_grouped_batches(
        validation_ids, data.label_ids("validation"), len(data.labels), args.batch_size, data_args.max_length
    )
    warmup_steps = args.warmup(len(train_ids))
    with strategy.scope():
        classifier = build_classifier(config, vocab_size=len(tokenizer.vocabulary))
        compile_classifier(classifier, args, warmup_steps)
    training = fit(classifier, train_batches, validation_batches, args, partial, len(train_ids))
    training["replicas"] = strategy.num_replicas_in_sync

    logits = predict_logits(classifier, validation_ids, args.batch_size)
    validation = scores(data.label_ids("validation"), logits)
    logger.info("Validation accuracy %.4f, macro F1 %.4f", validation["accuracy"], validation["macro_f1"])
    build_end_to_end(tokenizer, classifier).save(partial / MODEL_FILE)
    record = run_record(  # with the warmup the ratio gave
        data,
        data_args,
        run_args,
        dataclasses.replace(args, warmup_steps=warmup_steps),
        config,
        classifier,
        len(tokenizer.vocabulary),
        training,
        validation,
    )
    write_run_json(partial, record)
    write_card(partial, record)
    shutil.rmtree(partial / BACKUP_DIR, ignore_errors=True)
    return finish_run(partial, run_args.output_dir)


def check_splits(data: TaskData) -> None:
    """Refuses, before any training, splits that cannot train or select a model."""
    for split in ("train", "validation"):
        if len(data.splits[split]) == 0:
            raise DataError(f"The {split} split is empty; it needs at least one example.")


# --- data ------------------------------------------------------------------------------------------------


def tokenize(tokenizer: tf.keras.layers.Layer, texts: list[str], chunk: int = 2048) -> list[np.ndarray]:
    """Each text's token ids without padding (at least one id; at most the tokenizer's max_length)."""
    rows: list[np.ndarray] = []
    for start in range(0, len(texts), chunk):
        ids = tokenizer(tf.constant(texts[start : start + chunk], tf.string)).numpy()  # (B, T)
        lengths = (ids != 0).sum(axis=1)
        rows.extend(row[:n] for row, n in zip(ids, lengths))
    return rows


def _mean_len(ids: list[np.ndarray]) -> float:
    return float(np.mean([len(row) for row in ids])) if ids else 0.0


def bucket_boundaries(max_length: int) -> list[int]:
    """Length limits of the batching buckets: fine for short texts, coarser for long ones."""
    bounds, edge = [], 4
    while edge < max_length:
        bounds.append(edge)
        edge += max(2, edge // 4)
    return bounds


def length_grouped_batches(
    ids: list[np.ndarray],
    labels: np.ndarray,
    num_labels: int,
    batch_size: int,
    max_length: int,
    shuffle_seed: int | None = None,
) -> tf.data.Dataset:
    """Batches of texts of similar length, each padded (with id 0) to its own longest text.

    With `shuffle_seed`, the texts are reshuffled every epoch (seeded) before being grouped by length.
    Yields (token ids (B, T), one-hot labels (B, K)).
    """
    lengths = np.array([len(row) for row in ids], dtype=np.int32)
    padded = np.zeros([len(ids), max(lengths, default=1)], np.int64)  # (N, T_max), cut per text below
    for i, row in enumerate(ids):
        padded[i, : len(row)] = row
    targets = np.eye(num_labels, dtype=np.float32)[np.asarray(labels, np.int64)]  # (N, K)
    dataset = tf.data.Dataset.from_tensor_slices((padded, lengths, targets))
    dataset = dataset.map(lambda row, length, target: (row[:length], target))  # (T_i,), (K,)
    if shuffle_seed is not None:
        dataset = dataset.shuffle(len(ids), seed=shuffle_seed, reshuffle_each_iteration=True)
    bounds = bucket_boundaries(max_length)
    dataset = dataset.bucket_by_sequence_length(
        lambda row, _: tf.shape(row)[0], bounds, [batch_size] * (len(bounds) + 1), pad_to_bucket_boundary=False
    )
    return dataset.prefetch(tf.data.AUTOTUNE)


# --- training --------------------------------------------------------------------------------------------


def compile_classifier(classifier: tf.keras.Model, args: ScratchArguments, warmup_steps: int) -> None:
    """AdamW under the warmup / inverse-square-root schedule, clipped gradients, smoothed cross-entropy."""
    logger.info("AdamW: peak learning rate %g after %d warmup steps", args.learning_rate, warmup_steps)
    optimizer = tf.keras.optimizers.AdamW(
        learning_rate=WarmupInverseSqrt(args.learning_rate, warmup_steps),
        weight_decay=args.weight_decay,
        beta_2=0.98,
        epsilon=1e-9,
        global_clipnorm=args.clip_norm,
    )
    optimizer.exclude_from_weight_decay(var_names=NO_DECAY)
    classifier.compile(
        optimizer=optimizer,
        loss=tf.keras.losses.CategoricalCrossentropy(from_logits=True, label_smoothing=args.label_smoothing),
        metrics=[tf.keras.metrics.CategoricalAccuracy(name="accuracy")],
    )


class StepLimit(tf.keras.callbacks.Callback):
    """Ends training after `max_steps` optimizer steps in total (resumed steps included)."""

    def __init__(self, max_steps: int):
        super().__init__()
        self.max_steps, self.steps = max_steps, 0

    def on_train_begin(self, logs=None):
        self.steps = int(self.model.optimizer.iterations.numpy())

    def on_train_batch_end(self, batch, logs=None):
        self.steps += 1
        if self.steps >= self.max_steps:
            self.model.stop_training = True


class Throughput(tf.keras.callbacks.Callback):
    """Times the training part of each epoch (validation excluded) and counts the examples it saw.

    Epoch-level hooks only, so that no per-step callback makes Keras wait for every step.
    """

    def __init__(self, batch_size: int, examples_per_epoch: int):
        super().__init__()
        self.batch_size, self.examples_per_epoch = batch_size, examples_per_epoch
        self.seconds, self.examples = 0.0, 0
        self._start, self._steps_before, self._counted = 0.0, 0, True

    def on_epoch_begin(self, epoch, logs=None):
        self._start, self._counted = time.perf_counter(), False
        self._steps_before = int(self.model.optimizer.iterations.numpy())

    def on_test_begin(self, logs=None):
        self._count()

    def on_epoch_end(self, epoch, logs=None):
        self._count()

    def _count(self) -> None:
        if self._counted:
            return
        self._counted = True
        self.seconds += time.perf_counter() - self._start
        steps = int(self.model.optimizer.iterations.numpy()) - self._steps_before
        # A whole epoch saw every example; one cut short by --max-steps saw about a batch per step.
        self.examples += min(self.examples_per_epoch, steps * self.batch_size)

    @property
    def examples_per_second(self) -> float:
        return self.examples / self.seconds if self.seconds else 0.0


def fit(
    classifier: tf.keras.Model,
    train_batches: tf.data.Dataset,
    validation_batches: tf.data.Dataset,
    args: ScratchArguments,
    run_dir: Path,
    examples_per_epoch: int,
) -> dict:
    """Fits with early stopping on validation accuracy, then restores the best epoch's weights.

    Progress survives interruption: `run_dir/backup` holds the last finished epoch for `--resume`, and
    `run_dir/history.csv` the history of every epoch, resumed ones included.
    """
    stopper = tf.keras.callbacks.EarlyStopping(
        monitor="val_accuracy", mode="max", patience=args.patience, restore_best_weights=True
    )
    throughput = Throughput(args.batch_size, examples_per_epoch)
    callbacks = [
        EpochSeconds(run_dir / EPOCH_SECONDS),
        tf.keras.callbacks.BackupAndRestore(str(run_dir / BACKUP_DIR)),
        tf.keras.callbacks.CSVLogger(str(run_dir / HISTORY_FILE), append=True),
        tf.keras.callbacks.TensorBoard(str(run_dir / LOG_DIR), profile_batch=0),
        stopper,
        throughput,
    ]
    if args.max_steps is not None:
        callbacks.append(StepLimit(args.max_steps))
    classifier.fit(
        train_batches,
        validation_data=validation_batches,
        epochs=args.epochs,
        callbacks=callbacks,
        verbose=1 if sys.stdout.isatty() else 2,
    )
    history = read_history(run_dir / HISTORY_FILE)
    best = max(history, key=lambda row: row["val_accuracy"]) if history else {"epoch": 0}
    return {
        "seconds": training_seconds(run_dir / EPOCH_SECONDS),
        "epochs_run": len(history),
        "best_epoch": best["epoch"],
        "steps": int(classifier.optimizer.iterations.numpy()),
        "history": history,
        "examples_per_second": round(throughput.examples_per_second, 1),
    }


def read_history(path: Path) -> list[dict]:
    """The per-epoch history CSVLogger wrote, epochs numbered from 1, as run.json records it."""
    if not path.is_file():
        return []
    with path.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    return [
        {
            "epoch": int(row["epoch"]) + 1,
            "loss": float(row["loss"]),
            "accuracy": float(row["accuracy"]),
            "val_loss": float(row["val_loss"]),
            "val_accuracy": float(row["val_accuracy"]),
        }
        for row in rows
    ]


# --- evaluation and the record ---------------------------------------------------------------------------


def predict_logits(classifier: tf.keras.Model, ids: list[np.ndarray], batch_size: int = 64) -> np.ndarray:
    """Logits (n, K) in the order of `ids`, computed on length-sorted batches padded to their own length."""
    forward = tf.function(
        lambda batch: classifier(batch, training=False),
        input_signature=[tf.TensorSpec([None, None], tf.int64)],
    )
    order = np.argsort([len(row) for row in ids], kind="stable")
    logits = np.zeros([len(ids), classifier.output_shape[-1]], np.float32)
    for start in range(0, len(ids), batch_size):
        chosen = order[start : start + batch_size]
        width = max(len(ids[i]) for i in chosen)
        batch = np.zeros([len(chosen), width], np.int64)
        for row, i in enumerate(chosen):
            batch[row, : len(ids[i])] = ids[i]
        logits[chosen] = forward(tf.constant(batch)).numpy()
    return logits


def scores(labels: np.ndarray, logits: np.ndarray) -> dict[str, float]:
    predicted = logits.argmax(axis=1)
    return {
        "accuracy": float(accuracy_score(labels, predicted)),
        "macro_f1": float(f1_score(labels, predicted, average="macro")),
    }


def run_record(
    data: TaskData,
    data_args: DataArguments,
    run_args: RunArguments,
    args: ScratchArguments,
    config: ModelConfig,
    classifier: tf.keras.Model,
    vocab_size: int,
    training: dict,
    validation: dict,
) -> dict:
    """The run.json record (core.rundir adds schema version, environment and time)."""
    params = int(classifier.count_params())
    trainable = int(sum(np.prod(w.shape) for w in classifier.trainable_weights))
    norm = "pre-LN" if config.norm == "pre" else "post-LN"
    kind = "causal decoder" if config.causal else "encoder"
    return {
        "side": "scratch",
        "model": {
            "name": f"Transformer {kind}, {config.num_layers} layers, d_model {config.d_model}, "
            f"{config.num_heads} heads, {norm}, {config.tokenizer} tokens",
            "source": "random initialisation (trained from scratch)",
            "params": params,
            "trainable_params": trainable,
            "file": MODEL_FILE,
            "config": {**config.to_dict(), "tokenizer_vocab_size": vocab_size, "max_length": data_args.max_length},
        },
        "data": data.describe(data_args),
        "hyperparameters": {
            **args.to_dict(),
            "strategy": run_args.strategy,
            "optimizer": "AdamW",
            "schedule": "warmup then 1/sqrt(step)",
        },
        "training": training,
        "validation": validation,
    }
