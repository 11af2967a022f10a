"""The Keras callbacks every model trains with, and the `fit` that runs them and summarises the run.

In order: progress lines when stdout is not a terminal; validation scores Keras' metrics do not compute (the
translator's chrF++), put into the epoch's logs before anything reads them; TensorBoard logs; the optimizer-step
budget; early stopping on a watched validation quantity with the best epoch's weights restored (never stopping
before the minimum number of steps, and restoring an epoch finished before an interruption too); the training
log (`core.training_log`), which records why training ends; with `--average-last`, the weights of the last
epochs, averaged when training ends; and last `BackupAndRestore` into the unfinished run directory, so that an
epoch's backup is written only after everything above has recorded it and `--resume` continues after an
interruption.

An epoch here is what Keras calls one: a pass over the training data or, with `--eval-steps N`, N optimizer steps
of a repeated training stream.
"""

from __future__ import annotations

import logging
import math
import os
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import tensorflow as tf

from core.args import BudgetArguments, ClassifierBudgetArguments
from core.averaging import RECENT_DIR, AverageLast
from core.budget import TrainingPlan, balanced_class_weights
from core.kinds import check_class_weight, dataset_outputs, monitor
from core.regression import regression_scores
from core.tasks import REGRESSION, SINGLE_LABEL
from core.training_log import HISTORY_FILE, TrainingLog, best_epoch, pass_examples, read_history, training_summary

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


class ValidationScore(tf.keras.callbacks.Callback):
    """A validation score computed outside Keras' metrics, put into each epoch's logs as `name` (`val_...`), where
    TensorBoard, early stopping and the training log read it like `val_loss`.

    Args:
        name: the logs key, `val_` and the score's name (`val_chrf`).
        score: computes the score of the model's current weights.
    """

    def __init__(self, name: str, score: Callable[[], float]) -> None:
        super().__init__()
        self.name, self.score = name, score

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        if logs is not None:
            logs[self.name] = float(self.score())


class StepBudget(tf.keras.callbacks.Callback):
    """Ends training after `max_steps` optimizer steps in total, resumed steps included (mid-epoch if need be).

    `reason` is the run's `stop_reason` when it does: `budget` for `--max-steps`, `max_epochs` when the limit is the
    planned epochs' steps (with `--eval-steps`, whose last period may overrun them).
    """

    _supports_tf_logs = True  # counts steps without reading the step's logs

    def __init__(self, max_steps: int, reason: str = "budget") -> None:
        super().__init__()
        self.max_steps, self.reason, self.steps, self.reached = max_steps, reason, 0, False

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        self.steps = int(self.model.optimizer.iterations.numpy())  # after BackupAndRestore restored the count

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        self.steps += 1
        if self.steps >= self.max_steps:
            self.reached = True
            self.model.stop_training = True


class EarlyStopping(tf.keras.callbacks.EarlyStopping):
    """Keras early stopping on `monitor` (`mode` max: higher is better; min: lower), with the best epoch's weights
    restored, that survives `--resume` and does not stop before `min_steps` optimizer steps.

    Every epoch is a candidate for the best weights (unlike `start_from_epoch`, which ignores the first
    epochs); only the decision to stop waits for the minimum. The best weights so far are also kept in
    `best_weights-<epoch>.npz` beside the backup until the run is finished, so a resumed run still restores an
    epoch finished before the interruption (also when nothing is left to train); its best value and patience count
    come back from the training log, the epochs the backup holds being those whose `steps` the restored optimizer
    has reached. A new best epoch's file is written at its end, and the previous best's is deleted only when the
    next epoch begins, after `BackupAndRestore` has written that epoch's backup: an interruption in between redoes
    the epoch and still finds the earlier best.
    """

    def __init__(
        self,
        patience: int,
        monitor: str = "val_accuracy",
        mode: str = "max",
        min_steps: int = 0,
        run_dir: Path | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(monitor=monitor, mode=mode, patience=patience, restore_best_weights=True, **kwargs)
        self.mode, self.min_steps = mode, min_steps
        self.run_dir = Path(run_dir) if run_dir is not None else None
        self.history_path = Path(run_dir) / HISTORY_FILE if run_dir is not None else None
        self._resumed = False

    def weights_path(self, epoch: int) -> Path:
        """The saved weights of `epoch` (counted from 1)."""
        return self.run_dir / BEST_WEIGHTS.format(epoch=epoch)

    def on_train_begin(self, logs: dict | None = None) -> None:
        super().on_train_begin(logs)
        self._resumed = False

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        if self.run_dir is None:
            return
        self._resume()
        for path in self.run_dir.glob(BEST_WEIGHTS.format(epoch="*")):
            if path != self.weights_path(self.best_epoch + 1):
                path.unlink()  # an earlier best, or an interrupted epoch's: the backup is past both

    def _resume(self) -> None:
        """Takes up the best epoch among those `BackupAndRestore` restored, once, before anything trains."""
        if self._resumed or self.run_dir is None:
            return
        self._resumed = True
        steps = int(self.model.optimizer.iterations.numpy())
        done = [row for row in read_history(self.history_path) if 0 < row["steps"] <= steps]
        best = best_epoch(done, self.monitor, self.mode)
        if not best or not self.weights_path(best).is_file():
            return
        with np.load(self.weights_path(best)) as saved:
            self.best_weights = [saved[f"w{i}"] for i in range(len(saved.files))]
        self.best = next(row[self.monitor] for row in done if row["epoch"] == best)
        self.best_epoch = best - 1
        self.wait = done[-1]["epoch"] - best

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
        self._resume()  # a resumed run with nothing left to train still ends on its best epoch's weights
        super().on_train_end(logs)


def stop_reason(callbacks: Sequence[tf.keras.callbacks.Callback]) -> str | None:
    """Why training ends after the epoch that just finished, read from the callbacks that can end it (None: it goes
    on, unless that was the last epoch)."""
    for callback in callbacks:
        if isinstance(callback, StepBudget) and callback.reached:
            return callback.reason
    if any(isinstance(c, EarlyStopping) and c.stopped_epoch > 0 for c in callbacks):
        return "early_stopping"
    return None


def make_callbacks(
    run_dir: Path,
    examples: Callable[[int, int], int],
    stopping: EarlyStopping,
    budget: StepBudget | None = None,
    first: Sequence[tf.keras.callbacks.Callback] = (),
    averaging: AverageLast | None = None,
) -> list[tf.keras.callbacks.Callback]:
    """The callbacks of a `fit`, in the order the module docstring gives, writing into the unfinished run directory
    `run_dir`: `first` (validation scores, the training stream) before the others; `examples` counts a period's
    training examples for the training log."""
    run_dir = Path(run_dir)
    progress = [] if sys.stdout.isatty() else [ProgressLog()]
    stoppers = [c for c in (budget, stopping) if c is not None]
    return [
        *progress,
        *first,
        tf.keras.callbacks.TensorBoard(log_dir=str(run_dir / LOG_DIR), write_graph=False, profile_batch=0),
        *stoppers,
        TrainingLog(run_dir / HISTORY_FILE, examples, lambda: stop_reason(stoppers)),
        *([averaging] if averaging else []),
        # kept after training ends: a run interrupted before it is finished resumes with nothing left to train
        tf.keras.callbacks.BackupAndRestore(backup_dir=str(run_dir / BACKUP_DIR), delete_checkpoint=False),
    ]


def fit(
    model: tf.keras.Model,
    train: tf.data.Dataset,
    validation: tf.data.Dataset,
    run_dir: Path,
    args: BudgetArguments,
    plan: TrainingPlan,
    examples: Callable[[int, int], int],
    *,
    monitor: str = "val_accuracy",
    mode: str = "max",
    callbacks: Sequence[tf.keras.callbacks.Callback] = (),
    average_last: int = 1,
    class_weight: dict[int, float] | None = None,
) -> dict[str, Any]:
    """Fits `model` (leaving the best validation epoch's weights in it) and returns run.json's `training`.

    Args:
        train: the training batches: one pass over the data (`plan.steps_per_epoch` batches), or an endless stream
            of passes, each epoch then `plan.steps_per_epoch` of its batches.
        validation: the validation batches, evaluated after every epoch.
        args: the trainer's options (`patience` and the budget are read).
        plan: the epochs the budget gives (`args.plan(steps_per_epoch)`).
        examples: `examples(first_step, last_step)`, the training examples between two optimizer step counts.
        monitor, mode: the validation quantity early stopping watches, and whether higher (max) or lower is better.
        callbacks: run before the others: the `ValidationScore`s to compute after every epoch besides Keras'
            metrics, and what else the training data needs (a `TokenBatchStream`).
        average_last: with 2 or more, average the last epochs' weights when training ends (`AverageLast`).
        class_weight: per label id, the loss weight of its examples.
    Returns:
        `training_summary` of the run's history file plus `budget` {min_steps, max_steps}, `early_stopping`
        {monitor, mode} and `averaged` (`AverageLast.record`; None without averaging).
    """
    steps_per_epoch, epochs, limit = None, plan.epochs, args.max_steps
    if int(train.cardinality()) == tf.data.INFINITE_CARDINALITY:
        steps_per_epoch = plan.steps_per_epoch
    if args.eval_steps:  # a Keras epoch is an evaluation period of the repeated training data
        train, steps_per_epoch = train.repeat(), args.eval_steps
        epochs, limit = math.ceil(plan.total_steps / args.eval_steps), plan.total_steps
    stopping = EarlyStopping(args.patience, monitor, mode, args.min_steps, run_dir, verbose=1)
    reason = "budget" if args.max_steps is not None and limit == args.max_steps else "max_epochs"
    budget = StepBudget(limit, reason) if limit is not None else None
    averaging = None
    if average_last > 1:
        scores = [c for c in callbacks if isinstance(c, ValidationScore)]
        averaging = AverageLast(average_last, run_dir, stopping, validator(model, validation, scores))
    model.fit(
        train,
        validation_data=validation,
        epochs=min(epochs, resumed_end(Path(run_dir) / HISTORY_FILE, limit) or epochs),
        steps_per_epoch=steps_per_epoch,
        callbacks=make_callbacks(run_dir, examples, stopping, budget, callbacks, averaging),
        class_weight=class_weight,
        verbose=1 if sys.stdout.isatty() else 2,
    )
    summary = training_summary(Path(run_dir) / HISTORY_FILE, monitor, mode)
    summary["budget"] = {"min_steps": args.min_steps, "max_steps": args.max_steps}
    summary["early_stopping"] = {"monitor": monitor, "mode": mode}
    summary["averaged"] = averaging.record if averaging else None
    return summary


def resumed_end(history_path: Path, max_steps: int | None) -> int | None:
    """The epoch after which a resumed run has nothing left to train: the first its training log records as stopped
    by early stopping or the step budget, or that reached the step budget it is given now. (A run that ran out of
    epochs continues when given more.)"""
    for row in read_history(history_path):
        stopped = row.get("stop_reason") in ("budget", "early_stopping")
        if stopped or (max_steps is not None and row["steps"] >= max_steps):
            return row["epoch"]
    return None


def validator(
    model: tf.keras.Model, validation: tf.data.Dataset, scores: Sequence[ValidationScore]
) -> Callable[[], dict[str, float]]:
    """The validation scores of the model's current weights, keyed as in Keras' epoch logs."""

    def validate() -> dict[str, float]:
        evaluated = model.evaluate(validation, return_dict=True, verbose=0)
        return {**{f"val_{key}": value for key, value in evaluated.items()}, **{s.name: s.score() for s in scores}}

    return validate


def fit_classifier(
    model: tf.keras.Model,
    train: tf.data.Dataset,
    validation: tf.data.Dataset,
    run_dir: Path,
    args: ClassifierBudgetArguments,
    plan: TrainingPlan,
    train_targets: np.ndarray,
    num_labels: int,
    problem_type: str = SINGLE_LABEL,
    callbacks: Sequence[tf.keras.callbacks.Callback] = (),
) -> dict[str, Any]:
    """`fit` for a model of one of the three kinds (`core.kinds`): early stopping on `val_<headline>` (mode max), the
    class weights `--class-weight balanced` asks for (single label only), and for regression the validation Spearman
    computed after every epoch.

    Args:
        validation: batches of (features, targets) the model's logits are scored on.
        args: the side's options (`batch_size` and `class_weight` besides what `fit` reads).
        train_targets: every training example's target (`core.data.TaskData.targets`), for the example count and
            class weights.
        num_labels: the task's classes (labels), for the class weights.
        problem_type: the task's kind.
        callbacks: what else runs before the others (`fit`'s `callbacks`).
    Returns:
        `fit`'s summary plus, with `--class-weight balanced`, `class_weights` (per label id).
    """
    check_class_weight(args.class_weight, problem_type)
    weights = balanced_class_weights(train_targets, num_labels) if args.class_weight == "balanced" else None
    examples = pass_examples(len(train_targets), plan.steps_per_epoch, args.batch_size)
    watched = monitor(problem_type)
    if problem_type == REGRESSION:
        spearman = lambda: regression_scores(*dataset_outputs(model, validation, problem_type))["spearman"]  # noqa: E731
        callbacks = [ValidationScore(watched, spearman), *callbacks]
    fitting = {"monitor": watched, "callbacks": callbacks, "class_weight": weights}
    summary = fit(model, train, validation, run_dir, args, plan, examples, **fitting)
    if weights is not None:
        summary["class_weights"] = [weights[k] for k in range(num_labels)]
    return summary


def remove_training_state(run_dir: Path) -> None:
    """Deletes what only an unfinished run needs (the backup, the best and the recent epochs' weights), once its
    model is saved."""
    run_dir = Path(run_dir)
    for name in (BACKUP_DIR, RECENT_DIR):
        shutil.rmtree(run_dir / name, ignore_errors=True)
    for path in run_dir.glob(BEST_WEIGHTS.format(epoch="*")):
        path.unlink()
