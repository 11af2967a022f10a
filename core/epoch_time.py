"""Training time that survives `--resume`: each finished epoch's wall seconds, kept in the run directory."""

from __future__ import annotations

import json
import time
from pathlib import Path

import tensorflow as tf

EPOCH_SECONDS = "epoch_seconds.jsonl"


class EpochSeconds(tf.keras.callbacks.Callback):
    """Appends `{"epoch": n, "seconds": s}` (validation included) to `path` when an epoch ends.

    The file sits in the unfinished run directory beside the backup, so a resumed run still counts the
    epochs it finished before the interruption; an epoch cut short and redone counts once.
    """

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = Path(path)
        self._start = 0.0

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        self._start = time.perf_counter()

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        row = {"epoch": epoch + 1, "seconds": round(time.perf_counter() - self._start, 3)}
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(row) + "\n")


def training_seconds(path: Path) -> float:
    """The wall seconds of every finished epoch in `path`, the last record of each epoch counting once."""
    path = Path(path)
    if not path.is_file():
        return 0.0
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return round(sum({row["epoch"]: row["seconds"] for row in rows}.values()), 3)
