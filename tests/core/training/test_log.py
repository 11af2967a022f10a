from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from core.training.budget import pass_examples
from core.training.log import TrainingLog, read_history, training_summary


def tiny_model() -> tf.keras.Model:
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
    model.compile(
        optimizer="sgd",
        loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=[tf.keras.metrics.SparseCategoricalAccuracy(name="accuracy")],
    )
    return model


class SlowValidation(tf.keras.callbacks.Callback):
    """Makes each validation pass take at least `seconds`."""

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds

    def on_test_end(self, logs=None):
        time.sleep(self.seconds)


def test_each_epoch_is_logged_with_its_training_time_without_validation(tmp_path: Path) -> None:
    x = np.random.default_rng(0).normal(size=(40, 3)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64)
    model = tiny_model()
    path = tmp_path / "history.jsonl"
    started = time.perf_counter()
    history = model.fit(
        x, y, batch_size=16, epochs=3, validation_data=(x, y), verbose=0,
        callbacks=[TrainingLog(path, pass_examples(40, 3, 16)), SlowValidation(0.5)],
    )  # fmt: skip
    wall = time.perf_counter() - started
    rows = read_history(path)
    assert [row["epoch"] for row in rows] == [1, 2, 3]
    assert [row["steps"] for row in rows] == [3, 6, 9]  # ceil(40 / 16) steps an epoch
    assert [row["examples"] for row in rows] == [40, 40, 40]
    assert [row["stop_reason"] for row in rows] == [None, None, "max_epochs"]  # the planned epochs ran out
    for key in ("loss", "accuracy", "val_loss", "val_accuracy"):
        np.testing.assert_allclose([row[key] for row in rows], history.history[key], rtol=1e-6)
    train_seconds = sum(row["train_seconds"] for row in rows)
    assert 0 < train_seconds < wall - 3 * 0.5  # the slow validation passes are not training time


def write_rows(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def row(epoch: int, val_accuracy: float, seconds: float, steps: int, examples: int = 100, stop=None) -> dict:
    return {
        "epoch": epoch, "loss": 1.0 / epoch, "accuracy": 0.5, "val_loss": 0.9 - val_accuracy / 2,
        "val_accuracy": val_accuracy, "train_seconds": seconds, "steps": steps, "examples": examples,
        "stop_reason": stop,
    }  # fmt: skip


def test_an_epoch_redone_after_an_interruption_counts_once(tmp_path: Path) -> None:
    # Epoch 2 was logged, interrupted before its backup, and run again (more slowly) on --resume.
    path = write_rows(
        tmp_path / "history.jsonl",
        [row(1, 0.7, 10.0, 5), row(2, 0.8, 4.0, 10), row(2, 0.75, 12.5, 10), row(3, 0.9, 6.0, 15, 40, "budget")],
    )
    summary = training_summary(path)
    assert summary["seconds"] == pytest.approx(10.0 + 12.5 + 6.0)
    assert summary["epochs_run"] == 3 and summary["steps"] == 15 and summary["stop_reason"] == "budget"
    assert [r["val_accuracy"] for r in summary["history"]] == [0.7, 0.75, 0.9]
    assert summary["best_epoch"] == 3
    assert summary["examples_per_second"] == pytest.approx((100 + 100 + 40) / 28.5, abs=1e-3)
    assert summary["history"] == read_history(path)  # every field of the log, the last line of each epoch


def test_the_best_epoch_is_the_first_with_the_highest_validation_accuracy(tmp_path: Path) -> None:
    path = write_rows(
        tmp_path / "h.jsonl", [row(1, 0.7, 1, 1), row(2, 0.9, 1, 2), row(3, 0.9, 1, 3), row(4, 0.8, 1, 4)]
    )
    assert training_summary(path)["best_epoch"] == 2
    assert training_summary(path, "val_loss", "min")["best_epoch"] == 2  # the lowest loss, here the same epoch
    assert training_summary(path, "loss", "min")["best_epoch"] == 4  # the lowest training loss: another quantity
    assert training_summary(tmp_path / "missing.jsonl")["epochs_run"] == 0
