"""The Keras callbacks both sides train with, and the `fit` that runs them and summarises the run.

In order: progress lines when stdout is not a terminal, the training log (`core.training_log`),
TensorBoard logs, the optimizer-step budget, early stopping on validation accuracy with the best epoch's
weights restored (never stopping before the minimum number of steps, and restoring an epoch finished
before an interruption too), and last `BackupAndRestore` into the unfinished run directory, so that an
epoch's backup is written only after everything above has recorded it and `--resume` continues after an
interruption.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import tensorflow as tf

from core.args import BudgetArguments
from core.budget import TrainingPlan, balanced_class_weights
from core.training_log import HISTORY_FILE, TrainingLog, best_epoch, read_history, training_summary

logger = logging.getLogger(__name__)

BACKUP_DIR = "backup"
BEST_WEIGHTS = "best_weights-{epoch}.npz"  # the best epoch's weights (epoch from 1) while the run is unfinished
LOG_DIR = "logs"


class ProgressLog(tf.keras.callbacks.Callback):
    """Logs progress about every 5% of an epoch: Keras prints nothing inside an epoch when stdout is not a terminal."""

    _supports_tf_logs = True  # the loss is read only on the steps that log, so other steps do not wait

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        self._epoch, self._start = epoch + 1, time.perf_counter()

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        steps = self.params.get("steps") or 0
        if steps and (batch + 1) % max(1, steps // 20) == 0 and batch + 1 < steps:
            elapsed = time.perf_counter() - self._start
            left = elapsed / (batch + 1) * (steps - batch - 1)
            loss = float((logs or {}).get("loss", float("nan")))
            logger.info("epoch %d: step %d/%d, loss %.4f, about %.0f s left", self._epoch, batch + 1, steps, loss, left)


class StepBudget(tf.keras.callbacks.Callback):
    """Ends training after `max_steps` optimizer steps in total, resumed steps included (mid-epoch if need be)."""

    _supports_tf_logs = True  # counts steps without reading the step's logs

    def __init__(self, max_steps: int) -> None:
        super().__init__()
        self.max_steps, self.steps, self.reached = max_steps, 0, False

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        self.steps = int(self.model.optimizer.iterations.numpy())  # after BackupAndRestore restored the count

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        self.steps += 1
        if self.steps >= self.max_steps:
            self.reached = True
            self.model.stop_training = True


class EarlyStopping(tf.keras.callbacks.EarlyStopping):
    """Keras early stopping on validation accuracy, with the best epoch's weights restored, that survives `--resume`
    and does not stop before `min_steps` optimizer steps.

    Every epoch is a candidate for the best weights (unlike `start_from_epoch`, which ignores the first
    epochs); only the decision to stop waits for the minimum. The best weights so far are also kept in
    `best_weights-<epoch>.npz` beside the backup, so a resumed run still restores an epoch finished before the
    interruption; its best value and patience count come back from the training log. A new best epoch's file
    is written at its end, and the previous best's is deleted only when the next epoch begins, after
    `BackupAndRestore` has written that epoch's backup: an interruption in between redoes the epoch and still
    finds the earlier best.
    """

    def __init__(self, patience: int, min_steps: int = 0, run_dir: Path | None = None, **kwargs: Any) -> None:
        super().__init__(monitor="val_accuracy", mode="max", patience=patience, restore_best_weights=True, **kwargs)
        self.min_steps = min_steps
        self.run_dir = Path(run_dir) if run_dir is not None else None
        self.history_path = Path(run_dir) / HISTORY_FILE if run_dir is not None else None
        self._resumed = False

    def weights_path(self, epoch: int) -> Path:
        """The saved weights of `epoch` (counted from 1)."""
        return self.run_dir / BEST_WEIGHTS.format(epoch=epoch)

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        if self.run_dir is None:
            return
        if not self._resumed and epoch > 0:
            self._resumed = True  # the first epoch after BackupAndRestore restored `epoch` finished epochs
            self._restore(epoch)
        for path in self.run_dir.glob(BEST_WEIGHTS.format(epoch="*")):
            if path != self.weights_path(self.best_epoch + 1):
                path.unlink()  # an earlier best, or an interrupted epoch's: the backup is past both

    def _restore(self, epoch: int) -> None:
        done = [row for row in read_history(self.history_path) if row["epoch"] <= epoch]
        best = best_epoch(done)
        if not best or not self.weights_path(best).is_file():
            return
        with np.load(self.weights_path(best)) as saved:
            self.best_weights = [saved[f"w{i}"] for i in range(len(saved.files))]
        self.best = next(row["val_accuracy"] for row in done if row["epoch"] == best)
        self.best_epoch = best - 1
        self.wait = epoch - best

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        stopping_already = self.model.stop_training  # the step budget, say
        super().on_epoch_end(epoch, logs)
        if self.run_dir is not None and self.best_epoch == epoch and self.best_weights is not None:
            path = self.weights_path(epoch + 1)
            np.savez(path.with_suffix(".tmp.npz"), **{f"w{i}": w for i, w in enumerate(self.best_weights)})
            os.replace(path.with_suffix(".tmp.npz"), path)
        if self.model.stop_training and not stopping_already:
            if int(self.model.optimizer.iterations.numpy()) < self.min_steps:
                self.model.stop_training, self.stopped_epoch = False, 0

    def on_train_end(self, logs: dict | None = None) -> None:
        super().on_train_end(logs)
        if self.run_dir is not None:
            for path in self.run_dir.glob(BEST_WEIGHTS.format(epoch="*")):
                path.unlink()


def make_callbacks(
    run_dir: Path,
    batch_size: int,
    examples_per_epoch: int,
    patience: int,
    max_steps: int | None = None,
    min_steps: int = 0,
) -> list[tf.keras.callbacks.Callback]:
    """The callbacks of a side's `fit`, writing into the unfinished run directory `run_dir`."""
    run_dir = Path(run_dir)
    progress = [] if sys.stdout.isatty() else [ProgressLog()]
    budget = [] if max_steps is None else [StepBudget(max_steps)]
    return [
        *progress,
        TrainingLog(run_dir / HISTORY_FILE, batch_size, examples_per_epoch),
        tf.keras.callbacks.TensorBoard(log_dir=str(run_dir / LOG_DIR), write_graph=False, profile_batch=0),
        *budget,
        EarlyStopping(patience, min_steps, run_dir, verbose=1),
        tf.keras.callbacks.BackupAndRestore(backup_dir=str(run_dir / BACKUP_DIR)),
    ]


def fit(
    model: tf.keras.Model,
    train: tf.data.Dataset,
    validation: tf.data.Dataset,
    run_dir: Path,
    args: BudgetArguments,
    plan: TrainingPlan,
    train_labels: np.ndarray,
    num_labels: int,
) -> dict[str, Any]:
    """Fits `model` (leaving the best validation epoch's weights in it) and returns run.json's `training`.

    Args:
        args: the side's options (`batch_size` and `patience`, the budget and `class_weight` are read).
        plan: the epochs the budget gives (`args.plan(steps_per_epoch)`).
        train_labels: the label id of every training example, for the example count and class weights.
        num_labels: the task's classes.
    Returns:
        `training_summary` of the run's history file plus `budget` {min_steps, max_steps}, `stop_reason`
        (`budget`: the step budget ran out; `early_stopping`: validation accuracy stopped improving;
        `max_epochs`) and `class_weights` (per label id, with `--class-weight balanced`).
    """
    fit_callbacks = make_callbacks(
        run_dir, args.batch_size, len(train_labels), args.patience, max_steps=args.max_steps, min_steps=args.min_steps
    )
    weights = balanced_class_weights(train_labels, num_labels) if args.class_weight == "balanced" else None
    model.fit(
        train,
        validation_data=validation,
        epochs=plan.epochs,
        callbacks=fit_callbacks,
        class_weight=weights,
        verbose=1 if sys.stdout.isatty() else 2,
    )
    summary = training_summary(Path(run_dir) / HISTORY_FILE)
    summary["budget"] = {"min_steps": args.min_steps, "max_steps": args.max_steps}
    summary["stop_reason"] = stop_reason(fit_callbacks)
    if weights is not None:
        summary["class_weights"] = [weights[k] for k in range(num_labels)]
    return summary


def stop_reason(callbacks: list[tf.keras.callbacks.Callback]) -> str:
    """Why `fit` ended, read from the callbacks that can end it."""
    if any(isinstance(c, StepBudget) and c.reached for c in callbacks):
        return "budget"
    if any(isinstance(c, EarlyStopping) and c.stopped_epoch > 0 for c in callbacks):
        return "early_stopping"
    return "max_epochs"
