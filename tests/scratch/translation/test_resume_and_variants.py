"""`--resume` continues an interrupted run where it stopped, shown on the decoder-only variant, which then
trains, exports and translates like the encoder-decoder."""

from __future__ import annotations

import json

import pytest

import scratch.translation.train as train_module
from core.training_log import HISTORY_FILE, read_history
from core.translator import load, read_translation_run
from scratch.__main__ import main
from scratch.schedule import WarmupInverseSqrt
from scratch.translation.batching import sample_pairs
from tests.scratch.translation.conftest import tiny_command, train_tiny
from tests.scratch.translation.toy import toy_pairs, write_tsv


def interrupted(*args, **kwargs):
    """Stands in for the process being killed before the finished run is saved."""
    raise KeyboardInterrupt


def test_an_interrupted_decoder_only_run_resumes_after_its_last_epoch(tmp_path, monkeypatch, capsys):
    toy = write_tsv(tmp_path / "train.tsv", toy_pairs(400, seed=5))
    output = tmp_path / "run"
    flags = ["--arch", "decoder-only", "--early-stopping", "loss", "--patience", "5", "--average-last", "2"]
    monkeypatch.setattr(train_module, "save", interrupted)
    with pytest.raises(SystemExit, match="^130$"):  # an interruption ends the command with status 130
        train_tiny(tiny_command(toy, output, "--epochs", "1", *flags))
    partial = output.with_name("run.partial")
    first = json.loads((partial / train_module.STATE_FILE).read_text())
    logged = read_history(partial / HISTORY_FILE)
    assert first["epoch"] == 1 and [row["epoch"] for row in logged] == [1] and not output.exists()

    monkeypatch.undo()
    with pytest.raises(SystemExit) as stop:  # another shape cannot continue these weights
        main(tiny_command(toy, output, "--epochs", "2", "--resume", "--d-model", "32", *flags))
    assert stop.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith(f"error: --resume: {partial} was started with other data or another model (")
    assert "model.d_model 64 then, 32 now" in error and error.endswith("start again with --overwrite.")
    assert json.loads((partial / train_module.STATE_FILE).read_text()) == first  # left as it was
    run = train_tiny(tiny_command(toy, output, "--epochs", "2", "--resume", *flags))
    record = read_translation_run(run)
    history = record["training"]["history"]
    assert [row["epoch"] for row in history] == [1, 2]
    assert history[0] == logged[0]  # epoch 1 was not trained again
    assert record["training"]["steps"] == history[0]["steps"] + history[1]["steps"]
    assert history[1]["val_loss"] < history[0]["val_loss"]
    assert not partial.exists()
    averaged = record["training"]["averaged"]  # the snapshot of epoch 1, written before the interruption, counts
    assert averaged["epochs"] == [1, 2] and isinstance(averaged["kept"], bool)
    assert averaged["kept"] == (-averaged["val_loss"] > -min(row["val_loss"] for row in history))

    assert record["model"]["arch"] == "decoder-only"
    assert record["training"]["early_stopping"] == "val_loss"
    translator = load(run)
    out = translator.translate(["gato sol", "rio mar casa"])
    assert len(out) == 2 and all(isinstance(t, str) for t in out)
    with pytest.raises(ValueError, match="beam search needs encoder-decoder"):
        translator.translate(["gato"], beam=2)
    with pytest.raises(ValueError, match="no cross-attention"):
        translator.attention("gato")


def test_a_run_resumed_with_a_spent_step_budget_trains_no_further(tmp_path, monkeypatch):
    toy = write_tsv(tmp_path / "train.tsv", toy_pairs(200, seed=6))
    output = tmp_path / "run"
    monkeypatch.setattr(train_module, "save", interrupted)
    with pytest.raises(SystemExit, match="^130$"):  # an interruption ends the command with status 130
        train_tiny(tiny_command(toy, output, "--epochs", "1", "--early-stopping", "loss"))
    monkeypatch.undo()
    steps = json.loads((output.with_name("run.partial") / train_module.STATE_FILE).read_text())["steps"]
    assert steps > 1

    run = train_tiny(
        tiny_command(toy, output, "--epochs", "3", "--max-steps", "1", "--resume", "--early-stopping", "loss")
    )
    training = read_translation_run(run)["training"]
    assert [row["epoch"] for row in training["history"]] == [1] and training["steps"] == steps
    assert training["stop_reason"] == "budget"


def test_subword_sampling_draws_each_epoch_anew_and_the_run_still_translates(tmp_path, monkeypatch):
    toy = write_tsv(tmp_path / "train.tsv", toy_pairs(200, seed=7))
    draws = []

    def spy(proto, sources, targets, max_length, alpha, seed):
        rows = sample_pairs(proto, sources, targets, max_length, alpha, seed)
        draws.append((alpha, seed, rows))
        return rows

    monkeypatch.setattr(train_module, "sample_pairs", spy)
    run = train_tiny(tiny_command(toy, tmp_path / "run", "--epochs", "2", "--subword-alpha", "0.2"))
    assert [(alpha, seed) for alpha, seed, _ in draws] == [(0.2, 1), (0.2, 2)]  # --seed 0, epochs 1 and 2
    first, second = (rows for _, _, rows in draws)
    assert len(first[0]) == len(second[0]) and any(len(a) != len(b) for a, b in zip(first[0], second[0]))
    record = read_translation_run(run)
    assert record["hyperparameters"]["subword_alpha"] == 0.2 and record["training"]["schedule"] is None
    assert [row["epoch"] for row in record["training"]["history"]] == [1, 2]
    assert all(isinstance(t, str) for t in load(run).translate(["gato sol"]))


def test_a_cooldown_plans_the_whole_budget_and_the_run_records_the_plan(tmp_path, monkeypatch):
    toy = write_tsv(tmp_path / "train.tsv", toy_pairs(200, seed=7))
    schedules = []

    def spy(*args):
        schedules.append(WarmupInverseSqrt(*args))
        return schedules[-1]

    monkeypatch.setattr(train_module, "WarmupInverseSqrt", spy)
    run = train_tiny(tiny_command(toy, tmp_path / "run", "--epochs", "2", "--cooldown", "0.5", "--patience", "5"))
    record = read_translation_run(run)
    plan, history = record["training"]["schedule"], record["training"]["history"]
    assert record["hyperparameters"]["cooldown"] == 0.5
    assert plan["total_steps"] == 2 * plan["steps_per_epoch"] == sum(row["steps"] for row in history)
    assert plan["cooldown_steps"] == round(0.5 * plan["total_steps"])
    [schedule] = schedules  # the optimizer trained under the recorded plan
    assert (schedule.total_steps, schedule.cooldown_steps) == (plan["total_steps"], plan["cooldown_steps"])
    assert all(isinstance(t, str) for t in load(run).translate(["gato sol"]))


def test_an_interruption_between_checkpoint_and_state_retrains_that_epoch_from_the_one_before(tmp_path, monkeypatch):
    toy = write_tsv(tmp_path / "train.tsv", toy_pairs(200, seed=7))
    output = tmp_path / "run"
    flags = ["--early-stopping", "loss", "--patience", "5"]
    real_write_json = train_module.write_json
    epochs = []

    def killed_after_the_second_checkpoint(path, payload):
        if path.name == train_module.STATE_FILE:
            epochs.append(read_history(path.with_name(HISTORY_FILE))[-1])
            if payload["epoch"] == 2:
                raise KeyboardInterrupt  # epoch 2's checkpoint is saved, the state that records it is not
        real_write_json(path, payload)

    monkeypatch.setattr(train_module, "write_json", killed_after_the_second_checkpoint)
    with pytest.raises(SystemExit, match="^130$"):  # an interruption ends the command with status 130
        train_tiny(tiny_command(toy, output, "--epochs", "3", *flags))
    monkeypatch.undo()
    history = read_translation_run(train_tiny(tiny_command(toy, output, "--epochs", "3", "--resume", *flags)))[
        "training"
    ]["history"]
    assert [row["epoch"] for row in history] == [1, 2, 3]
    assert history[0] == epochs[0]
    # epoch 2 trained again from epoch 1's weights and optimizer, as the first time: the same losses
    assert (history[1]["loss"], history[1]["val_loss"]) == (epochs[1]["loss"], epochs[1]["val_loss"])


def test_the_same_seed_trains_the_same_run(tmp_path):
    toy = write_tsv(tmp_path / "train.tsv", toy_pairs(200, seed=9))
    flags = ["--epochs", "2", "--early-stopping", "loss", "--seed", "3"]
    runs = [read_translation_run(train_tiny(tiny_command(toy, tmp_path / name, *flags))) for name in ("a", "b")]
    histories = [
        [{k: v for k, v in row.items() if k != "train_seconds"} for row in run["training"]["history"]] for run in runs
    ]
    assert histories[0] == histories[1] and len(histories[0]) == 2
    assert runs[0]["validation"] == runs[1]["validation"]
    other = read_translation_run(train_tiny(tiny_command(toy, tmp_path / "c", *flags[:-1], "4")))
    assert other["training"]["history"][0]["loss"] != histories[0][0]["loss"]  # the seed is what made them equal


def test_a_state_without_its_epoch_s_checkpoint_is_refused_not_restored(tmp_path, monkeypatch, capsys):
    toy = write_tsv(tmp_path / "train.tsv", toy_pairs(200, seed=10))
    output = tmp_path / "run"
    flags = ["--epochs", "2", "--early-stopping", "loss"]
    monkeypatch.setattr(train_module, "save", interrupted)
    with pytest.raises(SystemExit, match="^130$"):  # an interruption ends the command with status 130
        train_tiny(tiny_command(toy, output, *flags))
    monkeypatch.undo()
    checkpoints = tmp_path / "run.partial" / train_module.CHECKPOINT_DIR
    for path in checkpoints.glob("ckpt-2*"):  # as an older version left it: the state's epoch has no checkpoint
        path.unlink()
    with pytest.raises(SystemExit) as stop:
        main(tiny_command(toy, output, "--resume", *flags))
    assert stop.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"error: --resume: {tmp_path / 'run.partial'} holds no checkpoint of epoch 2, the last one its state "
        "records; start again with --overwrite."
    )
