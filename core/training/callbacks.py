"""The Keras callbacks every model trains with (`core.training.loop` puts them in order): progress lines when stdout
is not a terminal, validation scores Keras' metrics do not compute, the optimizer-step budget, the clock (the time
budget), and early stopping with the best epoch's weights restored, surviving `--resume`.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import tensorflow as tf

from core.training.log import HISTORY_FILE, best_epoch, read_history
from core.training.schedule import schedule_of

logger = logging.getLogger(__name__)

PACED_STEPS = 10  # steps after a session's first (which traces the model) that time the pace the clock projects
BEST_WEIGHTS = "best_weights-{epoch}.npz"  # the best epoch's weights (epoch from 1) while the run is unfinished


class ProgressLog(tf.keras.callbacks.Callback):
    """What training has done so far, in the run's own terms (Keras' bars count a period's planned steps and its
    early stopping prints an epoch number, neither of which is the run's): optimizer steps against the planned
    total, resumed steps included; the loss; the latest validation of the watched score; the time left at the pace
    of this session. A bar on a terminal (tqdm), else a line about every `every` seconds; one line after each
    validation.

    Args:
        total_steps: the steps the run may take in all (its budget, or its planned epochs' steps).
        monitor: the watched validation score, shown after each validation.
        every: seconds between two lines when stdout is not a terminal.
        clock: the run's `TimeBudget`; when its budget runs out before the steps do, the time left is the clock's
            and the line says how many steps it allows at this pace.
    """

    _supports_tf_logs = True  # the loss is read only on the steps that report, so other steps do not wait

    def __init__(
        self,
        total_steps: int,
        monitor: str,
        every: float = 20.0,
        bar: bool | None = None,
        clock: TimeBudget | None = None,
    ) -> None:
        super().__init__()
        self.total_steps, self.monitor, self.every, self.clock = total_steps, monitor, every, clock
        self.bar = sys.stdout.isatty() if bar is None else bar
        self.latest = ""

    def on_train_begin(self, logs: dict | None = None) -> None:
        self._first = self.step = int(self.model.optimizer.iterations.numpy())  # after BackupAndRestore restored it
        self._paced = False
        self._start = self._shown = time.perf_counter()
        self._tqdm = None
        if self.bar:
            from tqdm.auto import tqdm

            self._tqdm = tqdm(total=self.total_steps, initial=self.step, unit="step", dynamic_ncols=True)

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        self.step += 1
        now = time.perf_counter()
        if not self._paced:  # the pace is timed from the end of the first step, which traces the model
            self._paced, self._first, self._start = True, self.step, now
        if self._tqdm is not None:
            self._tqdm.update(1)
            if now - self._shown >= 1.0:
                self._shown = now
                self._tqdm.set_postfix_str(f"loss {float((logs or {}).get('loss', float('nan'))):.4f}{self.latest}")
        elif now - self._shown >= self.every:
            self._shown = now
            loss = float((logs or {}).get("loss", float("nan")))
            logger.info("step %d/%d, loss %.4f%s, %s", self.step, self.total_steps, loss, self.latest, self.left(now))

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        value = (logs or {}).get(self.monitor)
        if value is None:
            return
        self.latest = f", {self.monitor} {float(value):.4f} at step {self.step}"
        if self._tqdm is None:
            loss = float((logs or {}).get("val_loss", float("nan")))
            logger.info(
                "validated at step %d/%d: %s %.4f, val_loss %.4f, %s",
                self.step,
                self.total_steps,
                self.monitor,
                float(value),
                loss,
                self.left(time.perf_counter()),
            )

    def on_train_end(self, logs: dict | None = None) -> None:
        if self._tqdm is not None:
            self._tqdm.close()

    def left(self, now: float) -> str:
        """The time the rest of the planned steps take at this session's pace so far (after its first step), or the
        clock's time left when that comes first, with the steps it allows."""
        done = self.step - self._first
        if done <= 0 or self.step >= self.total_steps:
            return "no step left" if self.step >= self.total_steps else "time left unknown yet"
        per_step = (now - self._start) / done
        seconds = per_step * (self.total_steps - self.step)
        if self.clock is not None and self.clock.seconds is not None:
            on_clock = max(0.0, self.clock.seconds - self.clock.elapsed())
            if on_clock < seconds:
                return f"about {round(on_clock)} s left on the clock, which allows about {self.step + int(on_clock / per_step)} steps"
        return f"about {round(seconds)} s left"


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


class TimeBudget(tf.keras.callbacks.Callback):
    """The run's clock: the wall seconds `fit` has run, validations included and the sessions before a `--resume`
    too; with `seconds`, it ends training (mid-epoch if need be, like `StepBudget`) once they are spent.

    The time spent before an interruption comes back from the training log: the `elapsed_seconds` of the last epoch
    the restored optimizer has reached (its `train_seconds` summed for a log written without them), the epoch the
    backup resumes after; an epoch cut short by the interruption is redone and its lost time is not counted.
    `reason` (`time`) is the run's `stop_reason` when the clock ends it. A learning-rate schedule that can end
    sooner (`core.training.schedule.LinearWarmupDecay.end_by`) is told after every step where the clock will end it,
    once `PACED_STEPS` steps after the session's first have timed the pace.

    Args:
        seconds: the time budget (None: the clock only runs, for the training log).
        history_path: the run's training log, which carries the time across `--resume`.
    """

    _supports_tf_logs = True  # reads the clock, not the step's logs
    reason = "time"

    def __init__(
        self, seconds: float | None, history_path: Path | None = None, clock: Callable[[], float] | None = None
    ) -> None:
        super().__init__()
        self.seconds, self.history_path, self.clock = seconds, history_path, clock or time.monotonic
        self.reached, self._carried, self._start, self._paced = False, None, None, None

    def on_train_begin(self, logs: dict | None = None) -> None:
        self._start, self._carried, self._paced = self.clock(), None, None

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        if self._carried is None:  # after BackupAndRestore restored the step count (it runs last)
            self._carried = spent_seconds(read_history(self.history_path), self._steps()) if self.history_path else 0.0

    def elapsed(self) -> float:
        """Seconds of training so far, the sessions before a `--resume` included."""
        now = self.clock()
        return (self._carried or 0.0) + now - (self._start if self._start is not None else now)

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        if self.seconds is None:
            return
        elapsed = self.elapsed()
        if elapsed >= self.seconds:
            self.reached = True
            self.model.stop_training = True
        elif hasattr(schedule := schedule_of(self.model.optimizer), "end_by"):
            steps = self._steps()
            if self._paced is None:  # the pace is timed from the end of the session's first step, which traces
                self._paced = steps, elapsed
            done, took = steps - self._paced[0], elapsed - self._paced[1]
            if done >= PACED_STEPS and took > 0:  # the pace so far, validations included, sets the last step
                schedule.end_by(steps + (self.seconds - elapsed) * done / took)

    def _steps(self) -> int:
        return int(self.model.optimizer.iterations.numpy())


def spent_seconds(history: list[dict], steps: int) -> float:
    """The training time a resumed run has already spent: the epochs of `history` the restored optimizer's `steps`
    have reached, by their last `elapsed_seconds` (else their `train_seconds`, summed).

    >>> rows = [{"steps": 10, "train_seconds": 4.0, "elapsed_seconds": 5.0}, {"steps": 20, "train_seconds": 4.0,
    ...          "elapsed_seconds": 10.5}, {"steps": 30, "train_seconds": 4.0, "elapsed_seconds": 16.0}]
    >>> spent_seconds(rows, 20), spent_seconds([{"steps": 10, "train_seconds": 4.0}], 10), spent_seconds(rows, 0)
    (10.5, 4.0, 0.0)
    """
    done = [row for row in history if 0 < row["steps"] <= steps]
    if not done:
        return 0.0
    if "elapsed_seconds" in done[-1]:
        return float(done[-1]["elapsed_seconds"])
    return float(sum(row["train_seconds"] for row in done))


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
