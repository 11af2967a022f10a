"""The shared training loop's callbacks: early stopping across an interruption (the best epoch's weights survive a
crash between a new best epoch's end and its backup, and a resumed run restores them, also with nothing left to
train), weight averaging of the last epochs, `fit`'s evaluation periods with `--eval-steps`, and the clock of
`--time-budget`, across a resume too."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import tensorflow as tf

from core.training import TrainingConfig, callbacks, fit, remove_training_state
from core.training.averaging import AverageLast
from core.training.budget import TrainingPlan, pass_examples
from core.training.callbacks import EarlyStopping, TimeBudget
from core.training.log import HISTORY_FILE, read_history
from core.training.loop import resumed_end
from core.training.schedule import LinearWarmupDecay

STEPS = 5  # optimizer steps an epoch in these tests


def net() -> tf.keras.Model:
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
    model.compile(optimizer="sgd", loss="mse")
    return model


def started(
    run_dir: Path, patience: int, model: tf.keras.Model | None = None, steps: int = 0, **kwargs
) -> EarlyStopping:
    """Early stopping at the start of `fit`, on `model` (a new small one by default) whose optimizer has taken `steps`
    steps (as `BackupAndRestore` restores them)."""
    callback = EarlyStopping(patience=patience, run_dir=run_dir, **kwargs)
    callback.set_model(model or net())
    callback.model.optimizer.iterations.assign(steps)
    callback.on_train_begin()
    return callback


def weights_of(value: float, model: tf.keras.Model) -> list[np.ndarray]:
    return [np.full_like(w, value) for w in model.get_weights()]


def end_epoch(callback: EarlyStopping, run_dir: Path, epoch: int, score: float, weights, key="val_accuracy") -> None:
    """One epoch (from 0) as `fit` runs it: early stopping, then the training log's line."""
    callback.on_epoch_begin(epoch)
    callback.model.set_weights(weights)
    callback.model.optimizer.iterations.assign_add(STEPS)
    callback.on_epoch_end(epoch, {key: score})
    with (run_dir / HISTORY_FILE).open("a") as handle:
        handle.write(json.dumps({"epoch": epoch + 1, key: score, "steps": STEPS * (epoch + 1)}) + "\n")


def files(run_dir: Path) -> list[str]:
    return sorted(p.name for p in run_dir.glob("best_weights*"))


def test_a_crash_before_a_new_best_epoch_s_backup_keeps_the_earlier_best(tmp_path: Path) -> None:
    first = started(tmp_path, patience=3)
    model = first.model
    end_epoch(first, tmp_path, 0, 0.80, weights_of(1.0, model))
    end_epoch(first, tmp_path, 1, 0.70, weights_of(2.0, model))
    end_epoch(first, tmp_path, 2, 0.90, weights_of(3.0, model))
    # Killed here: epoch 3's line and best weights are written, its backup is not, so the resumed run redoes it.
    assert files(tmp_path) == ["best_weights-1.npz", "best_weights-3.npz"]

    again = started(tmp_path, patience=3, model=model, steps=2 * STEPS)  # the backup holds two finished epochs
    again.on_epoch_begin(2)
    assert files(tmp_path) == ["best_weights-1.npz"]
    assert again.best == 0.80 and again.best_epoch == 0 and again.wait == 1
    np.testing.assert_array_equal(again.best_weights[0], weights_of(1.0, model)[0])

    end_epoch(again, tmp_path, 2, 0.75, weights_of(4.0, model))  # the redone epoch is worse this time
    assert again.best_epoch == 0 and again.wait == 2
    again.on_train_end()
    np.testing.assert_array_equal(model.get_weights()[0], weights_of(1.0, model)[0])
    assert files(tmp_path) == ["best_weights-1.npz"]  # kept until the run is finished
    remove_training_state(tmp_path)
    assert files(tmp_path) == []


def test_only_the_best_epoch_s_file_outlives_the_next_epoch_s_start(tmp_path: Path) -> None:
    callback = started(tmp_path, patience=5)
    model = callback.model
    end_epoch(callback, tmp_path, 0, 0.6, weights_of(1.0, model))
    end_epoch(callback, tmp_path, 1, 0.7, weights_of(2.0, model))
    assert files(tmp_path) == ["best_weights-1.npz", "best_weights-2.npz"]
    end_epoch(callback, tmp_path, 2, 0.65, weights_of(3.0, model))
    assert files(tmp_path) == ["best_weights-2.npz"]
    with np.load(tmp_path / "best_weights-2.npz") as saved:
        np.testing.assert_array_equal(saved["w0"], weights_of(2.0, model)[0])


def test_a_resumed_run_with_nothing_left_to_train_ends_on_its_best_epoch(tmp_path: Path) -> None:
    first = started(tmp_path, patience=1, monitor="val_loss", mode="min")
    model = first.model
    for epoch, (loss, value) in enumerate([(0.9, 1.0), (0.5, 2.0), (0.7, 3.0)]):
        end_epoch(first, tmp_path, epoch, loss, weights_of(value, model), key="val_loss")
    assert first.model.stop_training and first.best_epoch == 1  # the lowest loss
    # Killed after training stopped: the resumed fit runs no epoch, only on_train_begin and on_train_end.
    again = started(tmp_path, patience=1, model=model, steps=3 * STEPS, monitor="val_loss", mode="min")
    model.set_weights(weights_of(3.0, model))  # the backup's, the last epoch's
    again.on_train_end()
    np.testing.assert_array_equal(model.get_weights()[0], weights_of(2.0, model)[0])
    assert again.best == 0.5 and again.wait == 1


def test_a_resumed_run_ends_where_its_log_says_training_stopped(tmp_path: Path) -> None:
    path = tmp_path / HISTORY_FILE
    rows = [
        {"epoch": 1, "steps": 10, "stop_reason": None},
        {"epoch": 2, "steps": 20, "stop_reason": "early_stopping"},
        {"epoch": 3, "steps": 30, "stop_reason": None},  # redone after an earlier interruption, say
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert resumed_end(path, None) == 2
    assert resumed_end(path, 10) == 1  # resumed with a budget it has already spent
    path.write_text(json.dumps({"epoch": 1, "steps": 10, "stop_reason": "max_epochs"}) + "\n")
    assert resumed_end(path, None) is None  # given more epochs, it trains on


def test_averaging_keeps_the_element_wise_mean_of_the_last_epochs_when_it_scores_better(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    model = net()
    stopping = EarlyStopping(patience=5, monitor="val_loss", mode="min")
    stopping.best = 0.5
    scores = iter([{"val_loss": 0.4}, {"val_loss": 0.6}])
    averaging = AverageLast(3, tmp_path, stopping, lambda: next(scores))
    averaging.set_model(model)
    epochs = []
    for epoch in range(5):
        epochs.append([rng.normal(size=w.shape).astype(w.dtype) for w in model.get_weights()])
        model.set_weights(epochs[-1])
        averaging.on_epoch_end(epoch)
    assert averaging.epochs() == [3, 4, 5] and not list((tmp_path / "recent").glob("*.partial"))
    mean = [(a + b + c) / 3 for a, b, c in zip(*epochs[2:])]

    best = epochs[1]  # what early stopping restored before averaging runs
    model.set_weights(best)
    averaging.on_train_end()
    assert averaging.record == {"epochs": [3, 4, 5], "val_loss": 0.4, "kept": True}
    for kept, expected, other in zip(model.get_weights(), mean, epochs[4]):
        np.testing.assert_allclose(kept, expected, rtol=1e-6)
        assert not np.allclose(kept, other)  # distinct epochs, so the mean is none of them

    model.set_weights(best)
    averaging.on_train_end()  # the mean scores worse this time: the best epoch's weights stay
    assert averaging.record["kept"] is False
    for kept, expected in zip(model.get_weights(), best):
        np.testing.assert_array_equal(kept, expected)


def _tiny_fit(tmp_path: Path, **budget) -> list[dict]:
    """`fit` on 40 rows in batches of 16 (3 steps a pass) for 3 passes; the training log's rows."""
    tf.keras.utils.set_random_seed(0)
    x = np.random.default_rng(0).normal(size=(40, 3)).astype(np.float32)
    y = np.eye(2, dtype=np.float32)[(x[:, 0] > 0).astype(int)]
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2, activation="softmax")])
    model.compile(optimizer="sgd", loss="categorical_crossentropy", metrics=["accuracy"])
    train = tf.data.Dataset.from_tensor_slices((x, y)).batch(16)
    args = SimpleNamespace(
        patience=10, min_steps=0, **{"max_steps": None, "eval_steps": None, "time_budget": None, **budget}
    )
    plan = TrainingPlan(3, 3, min(9, args.max_steps or 9))
    config = TrainingConfig.from_arguments(args, plan, pass_examples(40, 3, 16), "val_accuracy", "max")
    summary = fit(model, train, train, tmp_path, config)
    assert summary["history"] == read_history(tmp_path / HISTORY_FILE)
    return summary["history"]


@pytest.mark.parametrize(
    ("budget", "steps", "examples", "reasons"),
    [
        ({}, [3, 6, 9], [40, 40, 40], [None, None, "max_epochs"]),
        ({"eval_steps": 4}, [4, 8, 9], [56, 56, 8], [None, None, "max_epochs"]),  # 40 + 16, 40 + 16, the last batch
        ({"eval_steps": 4, "max_steps": 6}, [4, 6], [56, 24], [None, "budget"]),
        ({"eval_steps": 2, "max_steps": 5}, [2, 4, 5], [32, 24, 16], [None, None, "budget"]),
    ],
)
def test_eval_steps_make_a_row_every_n_steps(tmp_path: Path, budget, steps, examples, reasons) -> None:
    rows = _tiny_fit(tmp_path, **budget)
    assert [row["steps"] for row in rows] == steps
    assert [row["examples"] for row in rows] == examples
    assert [row["stop_reason"] for row in rows] == reasons
    assert [row["epoch"] for row in rows] == list(range(1, len(rows) + 1))


class _InterruptAfter(tf.keras.callbacks.Callback):
    """Ctrl-C at the end of epoch `epoch` (from 0), before that epoch's backup is written."""

    def __init__(self, epoch: int) -> None:
        super().__init__()
        self.epoch = epoch

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        if epoch == self.epoch:
            raise KeyboardInterrupt


@pytest.mark.parametrize("eval_steps", [None, 2])
def test_a_resumed_run_trains_on_the_data_order_of_the_uninterrupted_run(tmp_path: Path, eval_steps) -> None:
    """Plain SGD without dropout: the same batches in the same order give the same weights, to the last bit."""

    def run(run_dir: Path, interrupt: int | None = None) -> list[np.ndarray]:
        tf.keras.utils.set_random_seed(0)
        x = np.random.default_rng(0).normal(size=(40, 3)).astype(np.float32)
        y = np.eye(2, dtype=np.float32)[(x[:, 0] > 0).astype(int)]
        model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2, activation="softmax")])
        model.compile(optimizer="sgd", loss="categorical_crossentropy")
        data = tf.data.Dataset.from_tensor_slices((x, y))
        train = data.shuffle(40, seed=7, reshuffle_each_iteration=True).batch(16)  # 3 steps a pass
        args = SimpleNamespace(patience=10, min_steps=0, max_steps=None, eval_steps=eval_steps, time_budget=None)
        config = TrainingConfig.from_arguments(
            args, TrainingPlan(4, 3, 12), pass_examples(40, 3, 16), "val_loss", "min"
        )
        callbacks = [_InterruptAfter(interrupt)] if interrupt is not None else []
        fit(model, train, data.batch(40), run_dir, config, callbacks)
        return model.get_weights()

    expected = run(tmp_path / "whole")
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path / "cut", interrupt=2)  # two periods backed up, the third logged and redone
    resumed = run(tmp_path / "cut")
    for got, want in zip(resumed, expected, strict=True):
        np.testing.assert_array_equal(got, want)


class Ticking:
    """A clock that moves one second each time it is read, whatever the machine's load."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def ticking_time() -> SimpleNamespace:
    """`core.training.callbacks`' `time` with the run's clock (`monotonic`) ticking; the progress lines' own."""
    return SimpleNamespace(monotonic=Ticking(), perf_counter=time.perf_counter)


def test_the_clock_ends_training_mid_epoch_and_the_log_says_so(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(callbacks, "time", ticking_time())
    # 4 seconds: read at the start (1), after steps 1, 2, 3 (2, 3, 4), so training ends after step 3; the log's
    # line reads it once more (5) after the period's validation
    rows = _tiny_fit(tmp_path, time_budget=4 / 60, eval_steps=2)
    assert [row["steps"] for row in rows] == [2, 3]
    assert [row["stop_reason"] for row in rows] == [None, "time"]
    assert rows[-1]["elapsed_seconds"] >= 4


def test_a_resumed_run_carries_the_time_it_has_spent(tmp_path: Path) -> None:
    history = tmp_path / HISTORY_FILE
    rows = [
        {"epoch": 1, "steps": 5, "train_seconds": 3.0, "elapsed_seconds": 4.0},
        {"epoch": 2, "steps": 10, "train_seconds": 3.0, "elapsed_seconds": 8.0},
    ]
    history.write_text("".join(json.dumps(row) + "\n" for row in rows))
    clock = Ticking()
    budget = TimeBudget(10.0, history, clock=clock)
    budget.set_model(net())
    budget.model.optimizer.iterations.assign(10)  # as BackupAndRestore restored it: after epoch 2
    budget.on_train_begin()  # clock 1
    budget.on_epoch_begin(2)
    budget.on_train_batch_end(0)  # clock 2: 8 s before and 1 s now
    assert not budget.reached
    budget.on_train_batch_end(1)  # clock 3: 10 s in all
    assert budget.reached and budget.model.stop_training
    assert resumed_end(history, None, time_budget=8.0) == 2  # resumed with a budget it has already spent
    assert resumed_end(history, None, time_budget=9.0) is None  # given more time, it trains on


@pytest.mark.parametrize(("total", "warmup_ratio"), [(100, 0.1), (2109, 0.1), (50, 0.0), (7, 0.3)])
def test_the_schedule_is_transformers_warmup_and_linear_decay_when_the_clock_leaves_it(total, warmup_ratio) -> None:
    from transformers import create_optimizer

    ours = LinearWarmupDecay(1e-3, warmup_ratio, total)
    _, theirs = create_optimizer(1e-3, total, math.ceil(warmup_ratio * total))
    steps = sorted({0, 1, total // 3, total // 2, total - 1, total, *range(0, total, max(1, total // 17))})
    np.testing.assert_allclose([float(ours(s)) for s in steps], [float(theirs(s)) for s in steps], atol=1e-9)


def test_the_clock_ends_the_learning_rate_s_decay_at_the_last_step_it_allows(tmp_path: Path) -> None:
    schedule = LinearWarmupDecay(0.1, 0.1, 1000)  # planned for 1,000 steps
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
    model.compile(optimizer=tf.keras.optimizers.SGD(schedule), loss="mse")
    budget = TimeBudget(100.0, tmp_path / HISTORY_FILE, clock=Ticking())  # one second a step: 100 steps fit
    budget.set_model(model)
    budget.on_train_begin()  # clock 1
    budget.on_epoch_begin(0)
    for step in range(1, 11):
        model.optimizer.iterations.assign(step)
        budget.on_train_batch_end(step - 1)  # clock step + 1: `step` steps in `step` seconds
    assert schedule.last_step == 1000  # 9 steps after the first do not time the pace yet
    for step in range(11, 51):
        model.optimizer.iterations.assign(step)
        budget.on_train_batch_end(step - 1)
    # 50 steps in 50 s, 50 s left: the decay now ends at step 100, its warmup the first 10 of them
    assert schedule.last_step == 100 and float(schedule(10)) == pytest.approx(0.1)
    assert float(schedule(55)) == pytest.approx(0.1 * 45 / 90) and float(schedule(100)) == 0.0
    schedule.end_by(5000)
    assert schedule.last_step == 1000  # never past the plan


def test_a_clocked_fine_tuning_run_records_where_its_decay_ended(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(callbacks, "time", ticking_time())
    tf.keras.utils.set_random_seed(0)
    x = np.random.default_rng(0).normal(size=(40, 3)).astype(np.float32)
    y = np.eye(2, dtype=np.float32)[(x[:, 0] > 0).astype(int)]
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2, activation="softmax")])
    model.compile(optimizer=tf.keras.optimizers.SGD(LinearWarmupDecay(0.1, 0.1, 90)), loss="categorical_crossentropy")
    args = SimpleNamespace(patience=90, min_steps=0, max_steps=None, eval_steps=None, time_budget=30 / 60)
    config = TrainingConfig.from_arguments(args, TrainingPlan(3, 30, 90), pass_examples(40, 3, 16), "val_loss", "min")
    train = tf.data.Dataset.from_tensor_slices((x, y)).batch(16)
    summary = fit(model, train, train, tmp_path, config)
    assert summary["stop_reason"] == "time" and summary["steps"] < 90
    # about a second a step (the clock ticks at each reading): the decay, planned over 90 steps, ends about where
    # the clock ended training
    assert summary["budget"]["schedule_end_step"] <= summary["steps"] + 2 < 90


def test_the_progress_line_gives_the_clock_s_time_left_when_the_clock_ends_training_first(monkeypatch) -> None:
    now = SimpleNamespace(t=0.0)
    monkeypatch.setattr(callbacks, "time", SimpleNamespace(perf_counter=lambda: now.t, monotonic=lambda: now.t))
    model = net()
    clock = callbacks.TimeBudget(100.0)  # 100 s of training
    lines = {
        name: callbacks.ProgressLog(2000, "val_accuracy", bar=False, clock=c)
        for name, c in (("clock", clock), ("steps", None))
    }
    for callback in (clock, *lines.values()):
        callback.set_model(model)
        callback.on_train_begin()
    clock.on_epoch_begin(0)
    for step in range(40):  # 40 steps: the first traces the model (20 s), the others take a second each
        now.t += 20.0 if step == 0 else 1.0
        for line in lines.values():
            line.on_train_batch_end(0)
    # 59 s of the clock's 100 spent; a second a step after the first: 41 s allow 41 steps more
    assert lines["clock"].left(now.t) == "about 41 s left on the clock, which allows about 81 steps"
    assert lines["steps"].left(now.t) == "about 1960 s left"  # without a clock, the pace and the planned steps
