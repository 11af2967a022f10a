"""Early stopping across an interruption: the best epoch's weights survive a crash between a new best epoch's
end and its backup, and a resumed run restores them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import tensorflow as tf

from core.callbacks import EarlyStopping
from core.training_log import HISTORY_FILE


def started(run_dir: Path, patience: int, net: tf.keras.Model | None = None) -> EarlyStopping:
    """Early stopping at the start of `fit`, on `net` (a new small model by default)."""
    callback = EarlyStopping(patience=patience, run_dir=run_dir)
    callback.set_model(net or tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)]))
    callback.on_train_begin()
    return callback


def weights_of(value: float, net: tf.keras.Model) -> list[np.ndarray]:
    return [np.full_like(w, value) for w in net.get_weights()]


def end_epoch(callback: EarlyStopping, run_dir: Path, epoch: int, val_accuracy: float, weights) -> None:
    """One epoch (from 0) as `fit` runs it: the training log's line first, then early stopping."""
    callback.on_epoch_begin(epoch)
    callback.model.set_weights(weights)
    with (run_dir / HISTORY_FILE).open("a") as handle:
        handle.write(json.dumps({"epoch": epoch + 1, "val_accuracy": val_accuracy}) + "\n")
    callback.on_epoch_end(epoch, {"val_accuracy": val_accuracy})


def files(run_dir: Path) -> list[str]:
    return sorted(p.name for p in run_dir.glob("best_weights*"))


def test_a_crash_before_a_new_best_epoch_s_backup_keeps_the_earlier_best(tmp_path: Path) -> None:
    first = started(tmp_path, patience=3)
    net = first.model
    end_epoch(first, tmp_path, 0, 0.80, weights_of(1.0, net))
    end_epoch(first, tmp_path, 1, 0.70, weights_of(2.0, net))
    end_epoch(first, tmp_path, 2, 0.90, weights_of(3.0, net))
    # Killed here: epoch 3's line and best weights are written, its backup is not, so the resumed run redoes it.
    assert files(tmp_path) == ["best_weights-1.npz", "best_weights-3.npz"]

    again = started(tmp_path, patience=3, net=net)
    again.on_epoch_begin(2)  # BackupAndRestore restored two finished epochs
    assert files(tmp_path) == ["best_weights-1.npz"]
    assert again.best == 0.80 and again.best_epoch == 0 and again.wait == 1
    np.testing.assert_array_equal(again.best_weights[0], weights_of(1.0, net)[0])

    again.model.set_weights(weights_of(4.0, net))
    with (tmp_path / HISTORY_FILE).open("a") as handle:
        handle.write(json.dumps({"epoch": 3, "val_accuracy": 0.75}) + "\n")  # the redone epoch is worse this time
    again.on_epoch_end(2, {"val_accuracy": 0.75})
    assert again.best_epoch == 0 and again.wait == 2
    again.on_train_end()
    assert files(tmp_path) == []


def test_only_the_best_epoch_s_file_outlives_the_next_epoch_s_start(tmp_path: Path) -> None:
    callback = started(tmp_path, patience=5)
    net = callback.model
    end_epoch(callback, tmp_path, 0, 0.6, weights_of(1.0, net))
    end_epoch(callback, tmp_path, 1, 0.7, weights_of(2.0, net))
    assert files(tmp_path) == ["best_weights-1.npz", "best_weights-2.npz"]
    end_epoch(callback, tmp_path, 2, 0.65, weights_of(3.0, net))
    assert files(tmp_path) == ["best_weights-2.npz"]
    with np.load(tmp_path / "best_weights-2.npz") as saved:
        np.testing.assert_array_equal(saved["w0"], weights_of(2.0, net)[0])
