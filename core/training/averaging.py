"""`AverageLast`: the Keras callback that averages the weights of a run's last epochs (`--average-last`); the
training loop (`core.training.loop`) runs it after early stopping."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import tensorflow as tf

from core.training.callbacks import EarlyStopping

logger = logging.getLogger(__name__)

RECENT_DIR = "recent"  # the last `--average-last` epochs' weights while the run is unfinished


class AverageLast(tf.keras.callbacks.Callback):
    """Keeps the weights of the last `count` epochs and, when training ends, replaces the best epoch's weights (which
    early stopping has just restored) by their element-wise mean if the mean scores better on validation.

    The snapshots are `recent/epoch-NNNN.npz` in the unfinished run directory (arrays in `get_weights()` order, each
    written to `.partial` first and renamed), so a resumed run averages epochs finished before the interruption too.
    `record` is then run.json's `training.averaged`: the averaged `epochs`, the mean's validation scores and
    whether it was `kept`; None when fewer than two epochs were kept.

    Args:
        count: epochs to average (2 or more).
        run_dir: the unfinished run directory.
        stopping: the run's early stopping, whose watched quantity and best value the mean is judged by.
        validate: the validation scores of the model's current weights, keyed as in the logs (`val_loss`, ...).
    """

    def __init__(
        self, count: int, run_dir: Path, stopping: EarlyStopping, validate: Callable[[], dict[str, float]]
    ) -> None:
        super().__init__()
        self.count, self.directory = count, Path(run_dir) / RECENT_DIR
        self.stopping, self.validate = stopping, validate
        self.record: dict[str, Any] | None = None

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / f"epoch-{epoch + 1:04d}.npz"
        unfinished = path.with_name(path.name + ".partial")
        with open(unfinished, "wb") as handle:
            np.savez(handle, *self.model.get_weights())
        unfinished.replace(path)  # a crash mid-write leaves no file that would be averaged
        for old in self.epochs()[: -self.count]:
            (self.directory / f"epoch-{old:04d}.npz").unlink()

    def epochs(self) -> list[int]:
        """The epochs whose weights are kept, oldest first."""
        return sorted(int(path.name[len("epoch-") : -len(".npz")]) for path in self.directory.glob("epoch-*.npz"))

    def average(self) -> list[np.ndarray]:
        """The element-wise mean of the kept epochs' weights."""
        snapshots = []
        for epoch in self.epochs():
            with np.load(self.directory / f"epoch-{epoch:04d}.npz") as saved:
                snapshots.append([saved[f"arr_{i}"] for i in range(len(saved.files))])
        return [np.mean(arrays, axis=0) for arrays in zip(*snapshots)]

    def on_train_end(self, logs: dict | None = None) -> None:
        epochs = self.epochs()
        if len(epochs) < 2:
            return
        best = self.model.get_weights()
        self.model.set_weights(self.average())
        scores = self.validate()
        kept = bool(self.stopping.monitor_op(scores[self.stopping.monitor], self.stopping.best))
        if not kept:
            self.model.set_weights(best)
        self.record = {"epochs": epochs, **scores, "kept": kept}
        logger.info("Average of epochs %s: %s (%s)", epochs, scores, "kept" if kept else "not better, not kept")
