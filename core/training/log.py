"""The training log every run keeps: one `history.jsonl` per run, one line per validation.

Training is validated after every pass over the training data, or with `--eval-steps N` every N optimizer steps;
Keras calls each such period an epoch, and so does the log. A line holds the period's metrics, its training wall
seconds (validation excluded), the optimizer steps run so far, the examples the period trained on and, on its
last line, why training ended; and the run's wall seconds of training so far, validations and the time before a
`--resume` included (`elapsed_seconds`, the clock `--time-budget` reads). The file lives in the unfinished run directory beside the `BackupAndRestore`
backup, so a resumed run keeps the epochs finished before the interruption; an epoch redone after an
interruption is written again and counts once (its last line wins). `training_summary` turns the file into
run.json's `training` section.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import tensorflow as tf

HISTORY_FILE = "history.jsonl"
METRICS = ("loss", "accuracy", "val_loss", "val_accuracy")  # logged first, the losses always, accuracy when compiled
LOSSES = ("loss", "val_loss")


class TrainingLog(tf.keras.callbacks.Callback):
    """Appends each finished epoch to `path` (JSON lines).

    Args:
        path: the history file, in the unfinished run directory.
        examples: `examples(first_step, last_step)`, the training examples between two optimizer step counts.
        stop_reason: why training ends after the epoch that just finished, if it does (`budget`, `time` or
            `early_stopping`; the last planned epoch ends with `max_epochs`, `logged_reason`); read after the callbacks
            that stop it.
        elapsed: the run's clock (`TimeBudget.elapsed`), the wall seconds of training so far across `--resume`,
            recorded as each line's `elapsed_seconds`; None: not recorded.
    """

    def __init__(
        self,
        path: str | Path,
        examples: Callable[[int, int], int],
        stop_reason: Callable[[], str | None] = lambda: None,
        elapsed: Callable[[], float] | None = None,
    ) -> None:
        super().__init__()
        self.path = Path(path)
        self.examples, self.stop_reason, self.elapsed = examples, stop_reason, elapsed
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
        metrics = [key for key in METRICS if key in logs or key in LOSSES]
        # then the other `val_*` scores (`val_macro_f1`, `val_spearman`), each after its training value if any
        scores = [key for key in logs if key.startswith("val_") and key not in METRICS]
        scores = [*(key[len("val_") :] for key in scores if key[len("val_") :] in logs), *scores]
        last = epoch + 1 >= self.params.get("epochs", math.inf)
        row = {
            "epoch": epoch + 1,
            **{key: float(logs.get(key, float("nan"))) for key in (*metrics, *scores)},
            "train_seconds": round(seconds, 3),
            "steps": steps,
            "examples": self.examples(self._steps_before, steps),
            **({"elapsed_seconds": round(self.elapsed(), 3)} if self.elapsed is not None else {}),
            "stop_reason": logged_reason(self.stop_reason(), last),
        }
        append_history(self.path, row)

    def _steps(self) -> int:
        return int(self.model.optimizer.iterations.numpy())


def logged_reason(reason: str | None, last: bool) -> str | None:
    """The stop reason an epoch is logged with: a limit's, early stopping's, or on the last planned epoch
    `max_epochs`, also when early stopping's patience ran out there too (it ended nothing early).

    >>> logged_reason(None, False), logged_reason("early_stopping", False), logged_reason("early_stopping", True)
    (None, 'early_stopping', 'max_epochs')
    """
    return "max_epochs" if last and reason in (None, "early_stopping") else reason


def append_history(path: str | Path, row: dict[str, Any]) -> None:
    """Adds one finished epoch's line to a history file."""
    with Path(path).open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(row) + "\n")


def read_history(path: str | Path) -> list[dict[str, Any]]:
    """The epochs of a history file in order, each epoch once (its last line)."""
    path = Path(path)
    if not path.is_file():
        return []
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    latest = {row["epoch"]: row for row in rows}
    return [latest[epoch] for epoch in sorted(latest)]


def best_epoch(history: list[dict[str, Any]], monitor: str = "val_accuracy", mode: str = "max") -> int:
    """The first epoch with the best `monitor` (highest with `mode` max, lowest with min), the one early stopping
    restores, or 0 for no epochs."""
    if not history:
        return 0
    sign = 1 if mode == "max" else -1
    return int(max(history, key=lambda row: (sign * row[monitor], -row["epoch"]))["epoch"])


def training_summary(path: str | Path, monitor: str = "val_accuracy", mode: str = "max") -> dict[str, Any]:
    """run.json's `training` section from a history file.

    Returns:
        `seconds` (the epochs' training seconds, summed), `epochs_run`, `best_epoch` (by `monitor` and `mode`),
        `steps` (optimizer steps in total), `stop_reason` (the last epoch's, `max_epochs` when none was logged),
        `history` (the file's rows) and `examples_per_second` (examples trained on over training seconds).
    """
    history = read_history(path)
    seconds = sum(row["train_seconds"] for row in history)
    examples = sum(row["examples"] for row in history)
    return {
        "seconds": round(seconds, 3),
        "epochs_run": len(history),
        "best_epoch": best_epoch(history, monitor, mode),
        "steps": history[-1]["steps"] if history else 0,
        "stop_reason": (history[-1].get("stop_reason") if history else None) or "max_epochs",
        "history": history,
        "examples_per_second": round(examples / seconds, 3) if seconds else 0.0,
    }
