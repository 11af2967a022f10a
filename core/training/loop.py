"""The training loop every model trains with: `fit` runs Keras `fit` with the shared callbacks and summarises the run.

The callbacks, in order: progress lines when stdout is not a terminal; a classifier's validation
(`core.training.validation.ValidationOutputs`: one pass over the validation split gives its outputs, the epoch's
`val_*` scores derived from them, and the kept weights' outputs for the final figures), or for another model Keras'
evaluation and the scores its metrics do not compute (the translator's chrF++), put into the epoch's logs before
anything reads them; TensorBoard logs; the optimizer-step budget; the clock (`--time-budget`,
which carries the time spent across `--resume` and may end training mid-epoch); in a `compare run --tune` trial, the
report of each validation to its Optuna study, whose pruner may end training (`core.training.pruning`); early stopping on the watched
validation quantity with the best epoch's weights restored (never stopping before the minimum number of steps, and
restoring an epoch finished before an interruption too); the training log (`core.training.log`), which records why
training ends; with `--average-last`, the weights of the last epochs, averaged when training ends; and last
`BackupAndRestore` into the unfinished run directory, so that an epoch's backup is written only after everything
above has recorded it and `--resume` continues after an interruption.

An epoch here is what Keras calls one: a pass over the training data or, with `--eval-steps N`, N optimizer steps
of a repeated training stream.
"""

from __future__ import annotations

import logging
import math
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import tensorflow as tf

from core.kinds import Kind
from core.training.averaging import RECENT_DIR, AverageLast
from core.training.callbacks import BEST_WEIGHTS, EarlyStopping, ProgressLog, StepBudget, TimeBudget, ValidationScore
from core.training.config import TrainingConfig
from core.training.log import HISTORY_FILE, TrainingLog, read_history, training_summary
from core.training.pruning import TrialPruning
from core.training.schedule import schedule_of
from core.training.validation import ValidationOutputs

logger = logging.getLogger(__name__)

BACKUP_DIR = "backup"
LOG_DIR = "logs"


def backed_up_epochs(run_dir: Path) -> int:
    """How many epochs the `BackupAndRestore` backup in the unfinished run directory `run_dir` holds (0 for none):
    the epochs a `--resume` continues after. The training log may count one more, finished but interrupted
    before its backup was written, which the resumed run redoes."""
    latest = tf.train.latest_checkpoint(str(Path(run_dir) / BACKUP_DIR / "chief"))
    if latest is None:
        return 0
    # Keras' own record of the last epoch it backed up, counted from 0 (tf_keras WorkerTrainingState)
    saved = tf.train.load_checkpoint(latest).get_tensor("ckpt_saved_epoch/.ATTRIBUTES/VARIABLE_VALUE")
    return max(int(saved) + 1, 0)


def fit(
    model: tf.keras.Model,
    train: tf.data.Dataset,
    validation: tf.data.Dataset,
    run_dir: Path,
    config: TrainingConfig,
    callbacks: Sequence[tf.keras.callbacks.Callback] = (),
) -> dict[str, Any]:
    """Fits `model` (leaving the best validation epoch's weights in it) and returns run.json's `training`.

    Args:
        model: the compiled model.
        train: the training batches: one pass over the data (`config.plan.steps_per_epoch` batches), or an endless
            stream of passes, each epoch then `steps_per_epoch` of its batches.
        validation: the validation batches of (features, targets), evaluated after every epoch.
        run_dir: the unfinished run directory, where the history, the logs and the backup go.
        config: what to do (`TrainingConfig`).
        callbacks: run before the others: the `ValidationScore`s to compute after every epoch besides Keras'
            metrics and the kind's, the classifier's `ValidationOutputs` (made here when `config.kind` is set and
            none is given; pass one to read its `kept` outputs after training), and what else the training data
            needs (a `TokenBatchStream`).
    Returns:
        `training_summary` of the run's history file plus `budget` {min_steps, max_steps}, `early_stopping`
        {monitor, mode}, `averaged` (`AverageLast.record`; None without averaging) and, with class weights,
        `class_weights` (per label id).
    """
    plan = config.plan
    steps_per_epoch, epochs, limit = None, plan.epochs, config.max_steps
    if int(train.cardinality()) == tf.data.INFINITE_CARDINALITY:  # a stream that replays itself (`TokenBatchStream`)
        steps_per_epoch = plan.steps_per_epoch
    else:
        train = replayed(train, run_dir, config.eval_steps)  # a resumed run trains on the order it would have
    if config.eval_steps:  # a Keras epoch is an evaluation period of the repeated training data
        train, steps_per_epoch = train.repeat(), config.eval_steps
        epochs, limit = math.ceil(plan.total_steps / config.eval_steps), plan.total_steps
    validating = next((c for c in callbacks if isinstance(c, ValidationOutputs)), None)
    if validating is None and config.kind is not None:
        validating = ValidationOutputs(validation, config.kind)
    if validating is not None:  # first: the others read the scores it logs
        callbacks = [validating, *(c for c in callbacks if c is not validating)]
    stopping = EarlyStopping(config.patience, config.monitor, config.mode, config.min_steps, run_dir)
    reason = "budget" if config.max_steps is not None and limit == config.max_steps else "max_epochs"
    budget = StepBudget(limit, reason) if limit is not None else None
    clock = TimeBudget(config.time_budget, Path(run_dir) / HISTORY_FILE)
    pruning = TrialPruning.from_environment(config.monitor, config.mode)  # None unless a `--tune` trial
    averaging = None
    if config.average_last > 1:
        scores = [c for c in callbacks if isinstance(c, ValidationScore)]
        validate = validator(
            model, validation, scores, validating, lambda: f"the average of epochs {averaging.epochs()}"
        )
        averaging = AverageLast(config.average_last, run_dir, stopping, validate)
    every = [  # the progress last: it reads the restored step count and the epoch's finished logs
        *make_callbacks(run_dir, config.examples, stopping, budget, callbacks, averaging, clock, pruning),
        ProgressLog(limit or epochs * (steps_per_epoch or plan.steps_per_epoch), config.monitor, clock=clock),
    ]
    if validating is not None:
        validating.attach(stopping, every)
    model.fit(
        train,
        validation_data=None if validating is not None else validation,  # one pass per validation, not two
        epochs=min(epochs, resumed_end(Path(run_dir) / HISTORY_FILE, limit, config.time_budget) or epochs),
        steps_per_epoch=steps_per_epoch,
        callbacks=every,
        class_weight=config.class_weight,
        verbose=0,  # ProgressLog reports: Keras' own lines count a period's planned steps, not the run's
    )
    if validating is not None:
        validating.settle(averaged=bool(averaging and averaging.record and averaging.record["kept"]))
    summary = training_summary(Path(run_dir) / HISTORY_FILE, config.monitor, config.mode)
    logger.info(
        "Training ended after %s steps: %s; keeping the weights of validation %s",
        summary.get("steps"),
        ended(summary.get("stop_reason"), config.time_budget),
        summary.get("best_epoch"),
    )
    summary["budget"] = {"min_steps": config.min_steps, "max_steps": config.max_steps}
    if config.time_budget is not None:
        summary["budget"]["time_budget_minutes"] = config.time_budget / 60
        if hasattr(schedule := schedule_of(model.optimizer), "last_step"):  # where the clock ended the decay
            summary["budget"]["schedule_end_step"] = schedule.last_step
            logger.info(
                "The learning rate was set to reach 0 at step %d, the last the clock allowed", schedule.last_step
            )
    summary["early_stopping"] = {"monitor": config.monitor, "mode": config.mode}
    summary["averaged"] = averaging.record if averaging else None
    if config.class_weight is not None:
        summary["class_weights"] = [config.class_weight[k] for k in range(len(config.class_weight))]
    return summary


def replayed(train: tf.data.Dataset, run_dir: Path, eval_steps: int | None) -> tf.data.Dataset:
    """The training passes a resumed run continues with: those that follow the epochs its backup holds, in the
    order the uninterrupted run would have drawn them.

    A pass's order comes from the dataset's seeded reshuffle, whose state lives in the dataset, not in the
    backup: a resumed run draws (and drops) the passes already trained, which costs one pass of the input
    pipeline each, not of the model. With `eval_steps`, the batches already trained are skipped instead.
    """
    done = backed_up_epochs(run_dir)
    if not done:
        return train
    if eval_steps:
        logger.info("Replaying the data order of the %d training steps before the interruption", done * eval_steps)
        return train.repeat().skip(done * eval_steps)  # (the loop's own `repeat` of it changes nothing)
    logger.info("Replaying the data order of the %d passes before the interruption", done)
    for _ in range(done):
        for _ in train:  # advances the seeded reshuffle one pass
            pass
    return train


STOP_REASONS = {
    "budget": "the step budget was spent",
    "early_stopping": "early stopping (the watched score stopped improving)",
    "max_epochs": "the planned epochs ran out",
    "time": "the clock ran out (the time budget was spent)",
    "pruned": "the tuning study pruned the trial",
}


def ended(stop_reason: str | None, time_budget: float | None = None) -> str:
    """Why training ended, for the progress log's last line; a clock stop names the budget in minutes.

    >>> ended("time", 90.0), ended("budget")
    ('the clock ran out (the time budget, 1.5 min, was spent)', 'the step budget was spent')
    """
    if stop_reason == "time" and time_budget is not None:
        return f"the clock ran out (the time budget, {time_budget / 60:g} min, was spent)"
    return STOP_REASONS.get(stop_reason, "it was stopped")


def validation_outputs(model: tf.keras.Model, dataset: tf.data.Dataset, kind: Kind) -> tuple[np.ndarray, np.ndarray]:
    """(targets, outputs) of a batched `(features, targets)` dataset, in its order: the outputs the kind makes of
    the model's logits (a transformers model's `logits`, or the Keras model's output)."""
    outputs = model.predict(dataset.map(lambda features, target: features), verbose=0)
    logits = outputs["logits"] if isinstance(outputs, dict) else outputs
    targets = np.concatenate([np.asarray(target) for _, target in dataset])
    return targets, kind.activate(logits).numpy()


def stop_reason(callbacks: Sequence[tf.keras.callbacks.Callback]) -> str | None:
    """Why training ends after the epoch that just finished, read from the callbacks that can end it (None: it goes
    on, unless that was the last epoch)."""
    for callback in callbacks:
        if isinstance(callback, (StepBudget, TimeBudget, TrialPruning)) and callback.reached:
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
    clock: TimeBudget | None = None,
    pruning: TrialPruning | None = None,
) -> list[tf.keras.callbacks.Callback]:
    """The callbacks of a `fit`, in the order the module docstring gives, writing into the unfinished run directory
    `run_dir`: `first` (validation scores, the training stream) before the others; `examples` counts a period's
    training examples for the training log; `clock` times the run (and with a time budget may end it); `pruning`
    reports to a tuning study, which may end it."""
    run_dir = Path(run_dir)
    stoppers = [c for c in (budget, clock, pruning, stopping) if c is not None]
    return [
        *first,
        tf.keras.callbacks.TensorBoard(log_dir=str(run_dir / LOG_DIR), write_graph=False, profile_batch=0),
        *stoppers,
        TrainingLog(run_dir / HISTORY_FILE, examples, lambda: stop_reason(stoppers), clock.elapsed if clock else None),
        *([averaging] if averaging else []),
        # kept after training ends: a run interrupted before it is finished resumes with nothing left to train
        tf.keras.callbacks.BackupAndRestore(backup_dir=str(run_dir / BACKUP_DIR), delete_checkpoint=False),
    ]


def resumed_end(history_path: Path, max_steps: int | None, time_budget: float | None = None) -> int | None:
    """The epoch after which a resumed run has nothing left to train: the first its training log records as stopped
    by early stopping or the step budget, or that reached the step budget or spent the time budget (seconds) it is
    given now. (A run that ran out of epochs or of time continues when given more.)"""
    for row in read_history(history_path):
        stopped = row.get("stop_reason") in ("budget", "early_stopping", "pruned")
        out_of_time = time_budget is not None and row.get("elapsed_seconds", 0.0) >= time_budget
        if stopped or out_of_time or (max_steps is not None and row["steps"] >= max_steps):
            return row["epoch"]
    return None


def validator(
    model: tf.keras.Model,
    validation: tf.data.Dataset,
    scores: Sequence[ValidationScore],
    validating: ValidationOutputs | None = None,
    weights: Callable[[], str] = lambda: "",
) -> Callable[[], dict[str, float]]:
    """The validation scores of the model's current weights, keyed as in Keras' epoch logs: through `validating`
    (`weights` naming them) when training validates through it, else Keras' evaluation, and then `scores`."""

    def validate() -> dict[str, float]:
        if validating is not None:
            evaluated = validating.validate(weights()).logs
        else:
            evaluated = {f"val_{k}": v for k, v in model.evaluate(validation, return_dict=True, verbose=0).items()}
        return {**evaluated, **{s.name: s.score() for s in scores}}

    return validate


def remove_training_state(run_dir: Path) -> None:
    """Deletes what only an unfinished run needs (the backup, the best and the recent epochs' weights), once its
    model is saved."""
    run_dir = Path(run_dir)
    for name in (BACKUP_DIR, RECENT_DIR):
        shutil.rmtree(run_dir / name, ignore_errors=True)
    for path in run_dir.glob(BEST_WEIGHTS.format(epoch="*")):
        path.unlink()
