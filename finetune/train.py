"""Training: the model for the task's labels, warmup + AdamW, and Keras `fit` with its callbacks.

Callbacks: a progress bar, TensorBoard logs, early stopping on validation accuracy with the best weights
restored, `BackupAndRestore` into the unfinished run directory (so `--resume` continues after an
interruption), and a per-epoch history file that survives the interruption too.
"""

from __future__ import annotations

import json
import logging
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import tensorflow as tf

from core.epoch_time import EPOCH_SECONDS, EpochSeconds, training_seconds
from finetune.args import FinetuneArguments
from finetune.checkpoint import Checkpoint, load_for_task

logger = logging.getLogger(__name__)

HISTORY = "history.jsonl"


@dataclass
class TrainResult:
    """What `fit` did, for run.json's `training` section."""

    history: list[dict[str, Any]]
    seconds: float
    best_epoch: int
    examples_per_second: float

    @property
    def epochs_run(self) -> int:
        return len(self.history)


def build_model(checkpoint: Checkpoint, labels: list[str], args: FinetuneArguments, total_steps: int) -> tf.keras.Model:
    """The classifier, compiled with AdamW (decoupled weight decay, linear warmup then linear decay).

    Call inside the distribution strategy's scope.
    """
    from transformers import create_optimizer

    model = load_for_task(checkpoint, labels)
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


class EpochLog(tf.keras.callbacks.Callback):
    """Appends each epoch's metrics and training time (validation excluded) to a JSON-lines file.

    The file lives in the unfinished run directory, so a resumed run keeps the epochs before the interruption.
    """

    def __init__(self, path: Path, examples: int) -> None:
        super().__init__()
        self.path = path
        self.examples = examples
        self._start = 0.0
        self._train_seconds = 0.0

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        self._start = time.perf_counter()
        self._train_seconds = 0.0

    def on_test_begin(self, logs: dict | None = None) -> None:
        if not self._train_seconds:
            self._train_seconds = time.perf_counter() - self._start

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        logs = logs or {}
        seconds = self._train_seconds or time.perf_counter() - self._start
        row = {
            "epoch": epoch + 1,
            "loss": float(logs["loss"]),
            "accuracy": float(logs.get("accuracy", float("nan"))),
            "val_loss": float(logs.get("val_loss", float("nan"))),
            "val_accuracy": float(logs.get("val_accuracy", float("nan"))),
            "train_seconds": round(seconds, 3),
            "examples": self.examples,
        }
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(row) + "\n")


class ProgressLog(tf.keras.callbacks.Callback):
    """Logs progress about every 5% of an epoch: Keras prints nothing inside an epoch when stdout is not a terminal."""

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        self._epoch, self._start = epoch + 1, time.perf_counter()

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        steps = self.params.get("steps") or 0
        if steps and (batch + 1) % max(1, steps // 20) == 0 and batch + 1 < steps:
            elapsed = time.perf_counter() - self._start
            left = elapsed / (batch + 1) * (steps - batch - 1)
            loss = (logs or {}).get("loss", float("nan"))
            logger.info("epoch %d: step %d/%d, loss %.4f, about %.0f s left", self._epoch, batch + 1, steps, loss, left)


def make_callbacks(run_dir: Path, args: FinetuneArguments, examples: int) -> list[tf.keras.callbacks.Callback]:
    progress = [] if sys.stdout.isatty() else [ProgressLog()]
    return [
        *progress,
        EpochLog(run_dir / HISTORY, examples),
        EpochSeconds(run_dir / EPOCH_SECONDS),
        tf.keras.callbacks.TensorBoard(log_dir=str(run_dir / "logs"), write_graph=False, profile_batch=0),
        tf.keras.callbacks.EarlyStopping(
            monitor="val_accuracy", mode="max", patience=args.patience, restore_best_weights=True, verbose=1
        ),
        # Last, so an epoch's backup is written only after everything above has recorded it.
        tf.keras.callbacks.BackupAndRestore(backup_dir=str(run_dir / "backup")),
    ]


def read_history(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / HISTORY
    if not path.is_file():
        return []
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    latest = {row["epoch"]: row for row in rows}  # an epoch redone after an interruption counts once
    return [latest[e] for e in sorted(latest)]


def fit(
    model: tf.keras.Model,
    train: tf.data.Dataset,
    validation: tf.data.Dataset,
    run_dir: Path,
    args: FinetuneArguments,
    examples: int,
) -> TrainResult:
    """Trains up to `args.epochs` epochs, leaving the best epoch's weights in `model`."""
    verbose = 1 if sys.stdout.isatty() else 2
    model.fit(
        train,
        validation_data=validation,
        epochs=args.epochs,
        callbacks=make_callbacks(run_dir, args, examples),
        verbose=verbose,
    )
    history = read_history(run_dir)
    best = max(history, key=lambda row: (row["val_accuracy"], -row["epoch"]))
    train_seconds = sum(row["train_seconds"] for row in history)
    trained = sum(row["examples"] for row in history)
    return TrainResult(
        history=[
            {k: row[k] for k in ("epoch", "loss", "accuracy", "val_loss", "val_accuracy", "train_seconds")}
            for row in history
        ],
        seconds=training_seconds(run_dir / EPOCH_SECONDS),
        best_epoch=int(best["epoch"]),
        examples_per_second=round(trained / train_seconds, 3) if train_seconds else 0.0,
    )


def count_params(model: tf.keras.Model) -> tuple[int, int]:
    """(all parameters, trainable parameters)."""
    trainable = int(sum(np.prod(w.shape) for w in model.trainable_weights))
    return int(model.count_params()), trainable
