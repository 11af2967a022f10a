"""The translator trains through `core.training.fit`: `--resume` continues a killed run from its last backup,
early stopping on chrF++ keeps the best epoch, `--eval-steps` and `--min-steps` mean what they mean for the
classifiers; and the variants (decoder-only, subword sampling, a cool-down) train, export and translate."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import tensorflow as tf

import core.training.loop
import scratch.translation.train as train_module
from core.training.log import HISTORY_FILE, read_history
from core.training.loop import BACKUP_DIR
from core.translator import load, read_translation_run
from scratch.__main__ import main
from scratch.schedule import WarmupInverseSqrt
from scratch.translation.batching import sample_pairs
from scratch.translation.train import load_trained
from tests.conftest import ROOT
from tests.scratch.translation.conftest import tiny_command, train_tiny, unexported
from tests.scratch.translation.toy import assert_translates, toy_pairs, write_tsv

pytestmark = pytest.mark.slow  # every test trains one or more translation runs


def untimed(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in row.items() if k not in ("train_seconds", "elapsed_seconds")} for row in rows]


def interrupted(*args, **kwargs):
    """Stands in for the process being killed before the finished run is saved."""
    raise KeyboardInterrupt


class WeightSnapshots(tf.keras.callbacks.Callback):
    """A copy of the weights at the end of every epoch."""

    def __init__(self) -> None:
        super().__init__()
        self.epochs: list[list[np.ndarray]] = []

    def on_epoch_end(self, epoch, logs=None):
        self.epochs.append([w.copy() for w in self.model.get_weights()])


def with_callbacks(monkeypatch, *first: tf.keras.callbacks.Callback) -> None:
    """Runs `first` before the callbacks `core.training.fit` makes."""
    make_callbacks = core.training.loop.make_callbacks
    monkeypatch.setattr(core.training.loop, "make_callbacks", lambda *a, **k: [*first, *make_callbacks(*a, **k)])


def assert_same_weights(saved: list[np.ndarray], expected: list[np.ndarray]) -> None:
    for restored, weights in zip(saved, expected, strict=True):
        np.testing.assert_array_equal(restored, weights)


KILL_MID_EPOCH = textwrap.dedent(
    """
    import os, signal, sys
    import tensorflow as tf
    import core.training.loop

    class Kill(tf.keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            self.epoch = epoch

        def on_train_batch_end(self, batch, logs=None):
            if self.epoch == 2 and batch == 1:  # two steps into the third epoch
                os.kill(os.getpid(), signal.SIGKILL)

    make_callbacks = core.training.loop.make_callbacks
    core.training.loop.make_callbacks = lambda *a, **k: [Kill(), *make_callbacks(*a, **k)]
    from scratch.__main__ import main
    sys.exit(main(sys.argv[1:]))
    """
)


def test_a_run_killed_mid_epoch_resumes_from_its_last_backup(tmp_path, no_export):
    toy = write_tsv(tmp_path / "train.tsv", toy_pairs(400, seed=5))
    flags = ["--epochs", "4", "--early-stopping", "loss", "--patience", "5"]
    output = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", KILL_MID_EPOCH, *tiny_command(toy, output, *flags)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == -signal.SIGKILL, done.stderr[-2000:]
    partial = output.with_name("run.partial")
    before = read_history(partial / HISTORY_FILE)
    assert [row["epoch"] for row in before] == [1, 2] and (partial / BACKUP_DIR).is_dir() and not output.exists()

    run = train_tiny(tiny_command(toy, output, "--resume", *flags))
    lines = [json.loads(line) for line in (run / HISTORY_FILE).read_text().splitlines()]
    assert [row["epoch"] for row in lines] == [1, 2, 3, 4]  # each epoch once: the killed one had logged nothing
    assert lines[:2] == before
    training = read_translation_run(run).training
    steps_per_epoch = before[0]["steps"]
    assert (
        [row["steps"] for row in lines]
        == [steps_per_epoch * n for n in (1, 2, 3, 4)]
        == [row["steps"] for row in training.history]
    )
    assert not partial.exists() and not (run / BACKUP_DIR).exists()
    # The same run, never interrupted: the resumed one continued from epoch 2's weights, optimizer and batches, and
    # a second run with the same seed is the same run.
    again = read_translation_run(train_tiny(tiny_command(toy, tmp_path / "again", *flags)))
    assert untimed(again.training.history) == untimed(training.history)
    assert again.validation == read_translation_run(run).validation


def test_early_stopping_on_chrf_restores_the_best_epoch_s_weights(tmp_path, monkeypatch, no_export):
    toy = write_tsv(tmp_path / "train.tsv", toy_pairs(1000, seed=3))

    class Scramble(tf.keras.callbacks.Callback):
        """From the third epoch on, training starts from weights set to 0: chrF++ falls."""

        def on_epoch_begin(self, epoch, logs=None):
            if epoch >= 2:
                self.model.set_weights([np.zeros_like(w) for w in self.model.get_weights()])

    snapshots = WeightSnapshots()
    with_callbacks(monkeypatch, Scramble(), snapshots)
    run = train_tiny(tiny_command(toy, tmp_path / "run", "--epochs", "6", "--patience", "2", "--max-tokens", "256"))
    record = read_translation_run(run)
    training, history = record.training, record.training.history
    chrf = [row["val_chrf"] for row in history]
    assert training.stop_reason == "early_stopping" and training.epochs_run == 4 == len(snapshots.epochs)
    assert training.best_epoch == 2 and max(chrf[2:]) < chrf[1] and chrf[1] > 5
    assert training.early_stopping == {"monitor": "val_chrf", "mode": "max"}
    model, _, _ = load_trained(run)
    assert_same_weights(model.get_weights(), snapshots.epochs[1])
    assert record.validation["chrf"] == pytest.approx(chrf[1], abs=1e-9)  # scored on the restored weights


def test_eval_steps_log_a_row_every_n_steps_with_cumulative_steps(tmp_path, no_export):
    toy = write_tsv(tmp_path / "train.tsv", toy_pairs(400, seed=5))  # 324 train pairs in 4 batches a pass
    flags = ["--epochs", "3", "--eval-steps", "5", "--early-stopping", "loss", "--patience", "5"]
    record = read_translation_run(train_tiny(tiny_command(toy, tmp_path / "run", *flags)))
    training, hyperparameters = record.training, record.hyperparameters
    assert (hyperparameters["steps_per_epoch"], hyperparameters["total_steps"]) == (4, 12)
    assert [row["steps"] for row in training.history] == [5, 10, 12]  # the last period ends with the 3 passes
    assert [row["stop_reason"] for row in training.history] == [None, None, "max_epochs"]
    assert sum(row["examples"] for row in training.history) == 3 * 324  # three whole passes over the pairs
    assert training.steps == 12 and training.epochs_run == 3


def test_the_translator_does_not_stop_early_before_its_minimum_steps(tmp_path, monkeypatch, no_export):
    toy = write_tsv(tmp_path / "train.tsv", toy_pairs(400, seed=5))  # 4 steps an epoch
    monkeypatch.setattr(train_module, "validation_chrf", lambda *args: 50.0)  # never better than the first epoch
    flags = ["--epochs", "6", "--patience", "1"]
    held = read_translation_run(train_tiny(tiny_command(toy, tmp_path / "held", *flags, "--min-steps", "9")))
    training = held.training
    # Early stopping (patience 1, no epoch better than the first) wanted to stop after epoch 2 (8 steps); the first
    # epoch end at 9 steps or more is the 3rd.
    assert (training.epochs_run, training.steps, training.stop_reason) == (3, 12, "early_stopping")
    assert training.budget == {"min_steps": 9, "max_steps": None} and training.best_epoch == 1


def test_an_epoch_logged_but_not_backed_up_is_trained_again_from_the_backup(tmp_path, monkeypatch, no_export):
    toy = write_tsv(tmp_path / "train.tsv", toy_pairs(200, seed=7))
    output = tmp_path / "run"
    flags = ["--epochs", "3", "--early-stopping", "loss", "--patience", "5", "--eval-steps", "3"]

    class Interrupt(tf.keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            if epoch == 1:
                raise KeyboardInterrupt

    make_callbacks = core.training.loop.make_callbacks

    def interrupted_before_the_backup(*args, **kwargs):
        *others, backup = make_callbacks(*args, **kwargs)
        return [*others, Interrupt(), backup]  # period 2 is logged, then interrupted before its backup

    monkeypatch.setattr(core.training.loop, "make_callbacks", interrupted_before_the_backup)
    with pytest.raises(SystemExit, match="^130$"):  # an interruption ends the command with status 130
        train_tiny(tiny_command(toy, output, *flags))
    monkeypatch.setattr(core.training.loop, "make_callbacks", make_callbacks)
    run = train_tiny(tiny_command(toy, output, "--resume", *flags))
    lines = [json.loads(line) for line in (run / HISTORY_FILE).read_text().splitlines()]
    assert [row["epoch"] for row in lines] == [1, 2, 2, 3]
    assert untimed(lines[1:2]) == untimed(lines[2:3])  # from period 1's weights, optimizer and batches, as before
    # run.json counts each period once: the first, the one trained again, and the last
    assert untimed(read_translation_run(run).training.history) == untimed([lines[0], lines[2], lines[3]])
    other = read_translation_run(train_tiny(tiny_command(toy, tmp_path / "other", *flags, "--seed", "4")))
    assert other.training.history[0]["loss"] != lines[0]["loss"]  # the seed is what makes two runs equal


def test_a_run_resumed_with_a_spent_step_budget_trains_no_further(tmp_path, monkeypatch):
    toy = write_tsv(tmp_path / "train.tsv", toy_pairs(200, seed=6))
    output = tmp_path / "run"
    monkeypatch.setattr(train_module, "save", interrupted)
    with pytest.raises(SystemExit, match="^130$"):  # an interruption ends the command with status 130
        train_tiny(tiny_command(toy, output, "--epochs", "1", "--early-stopping", "loss"))
    monkeypatch.setattr(train_module, "save", unexported)
    steps = read_history(output.with_name("run.partial") / HISTORY_FILE)[-1]["steps"]
    assert steps > 1

    run = train_tiny(
        tiny_command(toy, output, "--epochs", "3", "--max-steps", "1", "--resume", "--early-stopping", "loss")
    )
    training = read_translation_run(run).training
    assert [row["epoch"] for row in training.history] == [1] and training.steps == steps


def test_an_interrupted_decoder_only_run_resumes_and_keeps_the_average_of_its_last_epochs(
    tmp_path, monkeypatch, capsys
):
    toy = write_tsv(tmp_path / "train.tsv", toy_pairs(400, seed=5))
    output = tmp_path / "run"
    # two blocks: one block does not learn to translate in the two epochs the test trains
    flags = ["--arch", "decoder-only", "--num-layers", "2", "--early-stopping", "loss", "--patience", "5"]
    flags += ["--average-last", "2"]
    before, after = WeightSnapshots(), WeightSnapshots()
    with_callbacks(monkeypatch, before)
    monkeypatch.setattr(train_module, "save", interrupted)
    with pytest.raises(SystemExit, match="^130$"):  # an interruption ends the command with status 130
        train_tiny(tiny_command(toy, output, "--epochs", "1", *flags))
    partial = output.with_name("run.partial")
    logged = read_history(partial / HISTORY_FILE)
    assert [row["epoch"] for row in logged] == [1] and not output.exists()

    monkeypatch.undo()
    with pytest.raises(SystemExit) as stop:  # another shape cannot continue these weights
        main(tiny_command(toy, output, "--epochs", "2", "--resume", "--d-model", "32", *flags))
    assert stop.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith(f"error: --resume: {partial} was started with other data or another model (")
    assert "model.d_model 64 then, 32 now" in error and error.endswith("start again with --overwrite.")
    assert read_history(partial / HISTORY_FILE) == logged  # left as it was
    with_callbacks(monkeypatch, after)
    run = train_tiny(tiny_command(toy, output, "--epochs", "2", "--resume", *flags))
    record = read_translation_run(run)
    history = record.training.history
    assert [row["epoch"] for row in history] == [1, 2] and len(after.epochs) == 1
    assert history[0] == logged[0]  # epoch 1 was not trained again
    assert record.training.steps == 2 * history[0]["steps"]
    averaged = record.training.averaged  # the snapshot of epoch 1, written before the interruption, counts
    assert averaged["epochs"] == [1, 2]
    assert averaged["kept"] == (averaged["val_loss"] < min(row["val_loss"] for row in history))
    snapshots = [*before.epochs, *after.epochs]
    mean = [(a + b) / 2 for a, b in zip(*snapshots, strict=True)]
    kept = mean if averaged["kept"] else snapshots[record.training.best_epoch - 1]
    model, _, _ = load_trained(run)
    for saved, expected in zip(model.get_weights(), kept, strict=True):
        np.testing.assert_allclose(saved, expected, rtol=1e-6, atol=1e-7)
    assert any(not np.allclose(a, b) for a, b in zip(*snapshots, strict=True))  # two distinct epochs averaged

    assert record.model.arch == "decoder-only"
    translator = load(run)
    assert_translates(run, ["gato sol"])
    with pytest.raises(ValueError, match="beam search needs encoder-decoder"):
        translator.translate(["gato"], beam=2)
    with pytest.raises(ValueError, match="no cross-attention"):
        translator.attention("gato")


def test_subword_sampling_draws_each_pass_anew_a_cooldown_plans_the_whole_budget_and_the_run_translates(
    tmp_path, monkeypatch
):
    toy = write_tsv(tmp_path / "train.tsv", toy_pairs(200, seed=7))
    draws, schedules = [], []

    def sampled(proto, sources, targets, max_length, alpha, seed):
        rows = sample_pairs(proto, sources, targets, max_length, alpha, seed)
        draws.append((alpha, seed, rows))
        return rows

    def scheduled(*args):
        schedules.append(WarmupInverseSqrt(*args))
        return schedules[-1]

    monkeypatch.setattr(train_module, "sample_pairs", sampled)
    monkeypatch.setattr(train_module, "WarmupInverseSqrt", scheduled)
    flags = ["--epochs", "2", "--subword-alpha", "0.2", "--cooldown", "0.5", "--patience", "5"]
    run = train_tiny(tiny_command(toy, tmp_path / "run", *flags))
    # --seed 0, passes 1 and 2 (the stream may have drawn the next pass ahead before training ended)
    assert [(alpha, seed) for alpha, seed, _ in draws][:2] == [(0.2, 1), (0.2, 2)]
    first, second = (rows for _, _, rows in draws[:2])
    assert len(first[0]) == len(second[0]) and any(len(a) != len(b) for a, b in zip(first[0], second[0]))
    record = read_translation_run(run)
    plan, history = record.hyperparameters, record.training.history
    assert plan["subword_alpha"] == 0.2 and plan["cooldown"] == 0.5
    assert [row["epoch"] for row in history] == [1, 2]
    assert plan["total_steps"] == 2 * plan["steps_per_epoch"] == history[-1]["steps"]
    assert plan["cooldown_steps"] == round(0.5 * plan["total_steps"])
    [schedule] = schedules  # the optimizer trained under the recorded plan
    assert (schedule.total_steps, schedule.cooldown_steps) == (plan["total_steps"], plan["cooldown_steps"])
    assert_translates(run, ["gato sol"])
