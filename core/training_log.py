"""The training log both sides keep: one `history.jsonl` per run, one line per finished epoch.

A line holds the epoch's metrics, its training wall seconds (validation excluded), the optimizer steps run
so far and the examples the epoch trained on. The file lives in the unfinished run directory beside the
`BackupAndRestore` backup, so a resumed run keeps the epochs finished before the interruption; an epoch
redone after an interruption is written again and counts once (its last line wins). `training_summary`
turns the file into run.json's `training` section.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import tensorflow as tf

HISTORY_FILE = "history.jsonl"
HISTORY_FIELDS = ("epoch", "loss", "accuracy", "val_loss", "val_accuracy", "train_seconds")


class TrainingLog(tf.keras.callbacks.Callback):
    """Appends each finished epoch to `path` (JSON lines).

    Args:
        path: the history file, in the unfinished run directory.
        batch_size: examples per optimizer step (global, over all replicas).
        examples_per_epoch: rows of the train split; an epoch cut short counts a batch per step.
    """

    def __init__(self, path: str | Path, batch_size: int, examples_per_epoch: int) -> None:
        super().__init__()
        self.path = Path(path)
        self.batch_size, self.examples_per_epoch = batch_size, examples_per_epoch
        self._start, self._steps_before, self._train_seconds = 0.0, 0, None

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        self._steps_before = self._steps()
        self._start, self._train_seconds = time.perf_counter(), None

    def on_test_begin(self, logs: dict | None = None) -> None:
        if self._train_seconds is None:  # validation inside fit, not a later evaluate
            self._steps()  # waits for the epoch's last training step
            self._train_seconds = time.perf_counter() - self._start

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        logs = logs or {}
        steps = self._steps()
        seconds = self._train_seconds if self._train_seconds is not None else time.perf_counter() - self._start
        row = {
            "epoch": epoch + 1,
            **{key: float(logs.get(key, float("nan"))) for key in ("loss", "accuracy", "val_loss", "val_accuracy")},
            "train_seconds": round(seconds, 3),
            "steps": steps,
            "examples": min(self.examples_per_epoch, (steps - self._steps_before) * self.batch_size),
        }
        append_history(self.path, row)

    def _steps(self) -> int:
        return int(self.model.optimizer.iterations.numpy())


def append_history(path: str | Path, row: dict[str, Any]) -> None:
    """Adds one finished epoch's line to a history file."""
    with Path(path).open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(row) + "\n")


class EpochScalars:
    """TensorBoard event files for a training loop of its own, laid out as Keras's `TensorBoard` callback lays
    them out: `<log_dir>/train` and `<log_dir>/validation`, one `epoch_<metric>` scalar per epoch (step: the
    epoch counted from 0), so `tensorboard --logdir` shows every run alike."""

    def __init__(self, log_dir: str | Path) -> None:
        self.writers = {
            name: tf.summary.create_file_writer(str(Path(log_dir) / name)) for name in ("train", "validation")
        }

    def write(self, epoch: int, train: dict[str, float], validation: dict[str, float]) -> None:
        """`epoch` counted from 1; each dict maps a metric name (`loss`, `accuracy`, ...) to its value."""
        for name, values in (("train", train), ("validation", validation)):
            with self.writers[name].as_default():
                for metric, value in values.items():
                    tf.summary.scalar(f"epoch_{metric}", value, step=epoch - 1)
            self.writers[name].flush()


def read_history(path: str | Path) -> list[dict[str, Any]]:
    """The epochs of a history file in order, each epoch once (its last line)."""
    path = Path(path)
    if not path.is_file():
        return []
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    latest = {row["epoch"]: row for row in rows}
    return [latest[epoch] for epoch in sorted(latest)]


def best_epoch(history: list[dict[str, Any]]) -> int:
    """The first epoch with the highest validation accuracy (the one early stopping restores), or 0."""
    if not history:
        return 0
    return int(max(history, key=lambda row: (row["val_accuracy"], -row["epoch"]))["epoch"])


def training_summary(path: str | Path) -> dict[str, Any]:
    """run.json's `training` section from a history file.

    Returns:
        `seconds` (the epochs' training seconds, summed), `epochs_run`, `best_epoch`, `steps` (optimizer
        steps in total), `history` [{epoch, loss, accuracy, val_loss, val_accuracy, train_seconds}] and
        `examples_per_second` (examples trained on over training seconds).
    """
    history = read_history(path)
    seconds = sum(row["train_seconds"] for row in history)
    examples = sum(row["examples"] for row in history)
    return {
        "seconds": round(seconds, 3),
        "epochs_run": len(history),
        "best_epoch": best_epoch(history),
        "steps": history[-1]["steps"] if history else 0,
        "history": [{key: row[key] for key in HISTORY_FIELDS} for row in history],
        "examples_per_second": round(examples / seconds, 3) if seconds else 0.0,
    }
