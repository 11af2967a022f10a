import contextlib
import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from core.record import read_run
from core.training import loop as callbacks
from core.training.log import read_history
from scratch.__main__ import main
from scratch.pipeline import bucket_boundaries, grouped_batches, steps_per_epoch
from tests.conftest import separable_rows, write_csv
from tests.scratch.tiny import tiny_argv, train_tiny_run


@pytest.mark.slow
def test_tiny_preset_learns_the_separable_fixture_within_200_steps(tiny_run):
    run = read_run(tiny_run)
    assert run.training.steps <= 200
    assert run.validation["accuracy"] >= 0.95
    assert run.side == "scratch" and run.model.params == run.model.trainable_params > 0
    assert run.hyperparameters["preset"] == "tiny"
    assert run.data.labels == ["negative", "positive"]
    history = run.training.history
    assert [row["epoch"] for row in history] == list(range(1, run.training.epochs_run + 1))
    best = max(history, key=lambda row: row["val_accuracy"])
    assert run.training.best_epoch == best["epoch"]
    assert run.validation["accuracy"] == pytest.approx(best["val_accuracy"], abs=1e-6)
    assert {p.name for p in tiny_run.iterdir()} >= {"model.keras", "run.json", "README.md", "logs", "history.jsonl"}
    assert not (tiny_run / "backup").exists()
    assert not tiny_run.with_name(tiny_run.name + ".partial").exists()
    assert "## Validation metrics" in (tiny_run / "README.md").read_text()


@pytest.fixture(scope="module")
def again(tiny_run: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The shared tiny run trained again with the same seed (no ONNX step), and what it logged."""
    with logged() as said:
        run_dir = train_tiny_run(tmp_path_factory.mktemp("again") / "run", tiny_run.parent / "train.csv", no_onnx=True)
    return run_dir, said.getvalue()


@pytest.fixture(scope="module")
def budget(tiny_run: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A run of the shared run's data ended by a 30-step budget, its warmup left to the ratio, and what it logged."""
    run_dir = tmp_path_factory.mktemp("budget") / "run"
    with logged() as said:
        train_tiny_run(
            run_dir, tiny_run.parent / "train.csv", epochs=None, max_steps=30, warmup_steps=None, no_onnx=True
        )
    return run_dir, said.getvalue()


@contextlib.contextmanager
def logged() -> Iterator[io.StringIO]:
    """What the root logger is given at INFO and above while the block runs."""
    said = io.StringIO()
    handler = logging.StreamHandler(said)
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        yield said
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


@pytest.mark.slow
def test_the_same_seed_gives_the_same_run(tiny_run, again):
    first, second = read_run(tiny_run), read_run(again[0])
    assert second.validation == first.validation
    untimed = [
        {k: v for k, v in row.items() if k not in ("train_seconds", "elapsed_seconds")}
        for row in first.training.history
    ]
    assert [
        {k: v for k, v in row.items() if k not in ("train_seconds", "elapsed_seconds")}
        for row in second.training.history
    ] == untimed


@pytest.mark.slow
def test_run_json_records_the_warmup_the_ratio_gave(budget):
    hyperparameters = read_run(budget[0]).hyperparameters
    assert (hyperparameters["warmup_ratio"], hyperparameters["warmup_steps"]) == (0.1, 3)  # a tenth of 30 steps


def test_existing_output_is_refused_without_overwrite(tiny_run, capsys):
    with pytest.raises(SystemExit) as exit_:
        train_tiny_run(tiny_run, tiny_run.parent / "train.csv")
    assert exit_.value.code == 2
    assert "already exists. Pass --overwrite" in capsys.readouterr().err


def test_bad_model_options_fail_before_loading_data(tmp_path, capsys):
    missing = tmp_path / "missing.csv"
    with pytest.raises(SystemExit):
        main(tiny_argv(tmp_path / "run", missing, d_model=30, num_heads=4))
    assert "--d-model 30 is not divisible by --num-heads 4" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(tiny_argv(tmp_path / "run", missing, vocab_size=2))
    assert "not larger than the 2 reserved tokens" in capsys.readouterr().err
    assert not (tmp_path / "run.partial").exists()


def test_batches_group_similar_lengths_and_pad_to_their_own_longest():
    rng = np.random.default_rng(0)
    ids = [rng.integers(1, 50, size=n) for n in rng.integers(1, 40, size=300)]
    labels = rng.integers(0, 3, size=300)
    batches = list(grouped_batches(ids, np.eye(3)[labels], batch_size=16, max_length=64, shuffle_seed=1))
    seen = 0
    for tokens, targets in batches:
        tokens = tokens.numpy()
        lengths = (tokens != 0).sum(axis=1)
        assert tokens.shape[1] == lengths.max()  # padded to its own longest text, not to 64
        assert lengths.max() - lengths.min() <= max(2, lengths.max() // 4)  # similar lengths
        assert targets.shape == (len(tokens), 3)
        seen += len(tokens)
    assert seen == 300
    widths = sorted(int(t.shape[1]) for t, _ in batches)
    assert widths[0] < widths[-1]


def test_steps_per_epoch_counts_the_batches_an_epoch_yields():
    rng = np.random.default_rng(1)
    ids = [rng.integers(1, 50, size=n) for n in rng.integers(1, 60, size=333)]
    labels = rng.integers(0, 2, size=333)
    dataset = grouped_batches(ids, np.eye(2)[labels], batch_size=16, max_length=64, shuffle_seed=2)
    assert steps_per_epoch(ids, 16, 64) == len(list(dataset)) == len(list(dataset))  # the same every epoch
    assert dataset.options().autotune.enabled is False  # its thread can hold up the end of an epoch


@pytest.mark.slow
def test_a_step_budget_ends_training_mid_epoch_and_is_recorded(budget):
    run_dir, _ = budget
    run = read_run(run_dir)
    training, hyperparameters = run.training, run.hyperparameters
    per_epoch = hyperparameters["steps_per_epoch"]
    assert per_epoch == 12  # 162 training rows in batches of 16, one length bucket
    assert (training.steps, training.stop_reason, training.budget) == (
        30,
        "budget",
        {"min_steps": 0, "max_steps": 30},
    )
    assert hyperparameters["epochs"] == training.epochs_run == 3  # ceil(30 / 12), the third cut short
    assert hyperparameters["total_steps"] == 30
    assert json.loads((run_dir / "history.jsonl").read_text().splitlines()[-1])["examples"] == 6 * 16


@pytest.mark.slow
def test_progress_lines_count_the_runs_own_steps_and_say_why_training_ended(tiny_run, budget, again):
    said = budget[1]
    # Three validations of a 30-step budget (12 steps an epoch, the third cut short): steps of the run, not of Keras
    for step in (12, 24, 30):
        assert f"validated at step {step}/30: val_accuracy" in said
    assert "Training ended after 30 steps: the step budget was spent" in said
    assert "early stopping" not in said.lower()
    stopped = read_run(tiny_run).training  # the shared run stopped early (epoch 4, 48 steps)
    assert stopped.stop_reason == "early_stopping"
    assert f"Training ended after {stopped.steps} steps: early stopping" in again[1]


@pytest.mark.slow
def test_multi_label_early_stopping_keeps_the_best_validation_at_tuned_thresholds(tmp_path):
    """Two rare labels (3% and 5% of texts): at a fixed 0.5 their F1 stays 0 for a while, at thresholds tuned on
    validation it does not, and the kept weights are those of the best validation by the tuned score."""
    from sklearn.metrics import f1_score

    from core.classifier import load

    rng = np.random.default_rng(0)
    rows = []
    for i in range(600):
        draw = rng.random()
        labels = "rare" if draw < 0.03 else "scarce" if draw < 0.08 else "common" if draw < 0.6 else ""
        word = {"rare": "zebra", "scarce": "quartz", "common": "table", "": "plain"}[labels]
        rows.append((f"text {i} with a {word} in it and some {['red', 'blue', 'green'][i % 3]} words", labels))
    path = tmp_path / "train.csv"
    path.write_text("text,labels\n" + "".join(f"{t},{lab}\n" for t, lab in rows), encoding="utf-8")
    argv = tiny_argv(tmp_path / "run", path, epochs=None, max_steps=120, eval_steps=15, patience=2, no_onnx=True)
    main([*argv, "--label-column", "labels", "--problem", "multi_label_classification"])
    run = read_run(tmp_path / "run")
    history = run.training.history
    watched = [row["val_macro_f1"] for row in history]
    assert run.training.early_stopping == {"monitor": "val_macro_f1", "mode": "max"}
    assert run.training.best_epoch == 1 + int(np.argmax(watched))  # the first of the best
    assert max(watched) > 0.5
    # The kept weights decide validation as the watched score counted it: at the thresholds tuned there.
    model = load(tmp_path / "run")
    from compare.report.runs import data_arguments
    from core.data import load_task

    task = load_task(data_arguments(run))
    gold = task.targets("validation").astype(int)
    decided = model.predict(task.texts("validation"))
    assert f1_score(gold, decided, average="macro", zero_division=0) == pytest.approx(max(watched), abs=1e-6)
    at_half = model.predict_proba(task.texts("validation")) >= 0.5  # what early stopping used to watch
    assert max(watched) >= f1_score(gold, at_half, average="macro", zero_division=0)


@pytest.mark.slow
def test_early_stopping_waits_for_the_minimum_steps(tiny_run, tmp_path):
    unhurried = read_run(tiny_run).training
    assert unhurried.stop_reason == "early_stopping" and unhurried.epochs_run == 4
    minimum = train_tiny_run(
        tmp_path / "minimum", tiny_run.parent / "train.csv", min_steps=70, min_epochs=6, no_onnx=True
    )
    training = read_run(minimum).training
    assert training.budget["min_steps"] == 72  # six 12-step passes (--min-epochs 6) are more than --min-steps 70
    # Early stopping wanted to stop after epoch 4 (48 steps); the minimum ends with the 6th (72).
    assert (training.epochs_run, training.steps, training.stop_reason) == (6, 72, "early_stopping")
    assert training.best_epoch == unhurried.best_epoch  # every epoch stays a candidate for the best


@pytest.mark.slow
def test_balanced_class_weights_reach_the_loss_and_the_record(tmp_path):
    from sklearn.utils.class_weight import compute_class_weight

    rows = separable_rows(200)
    rows = [row for i, row in enumerate(rows) if row[1] == "positive" or i % 4 == 1]  # 100 positive, 50 negative
    train_file = write_csv(tmp_path / "train.csv", rows)
    run = read_run(
        train_tiny_run(tmp_path / "weighted", train_file, class_weight="balanced", max_steps=12, no_onnx=True)
    )
    assert run.hyperparameters["class_weight"] == "balanced"
    from core.args import DataArguments
    from core.data import load_task

    train = load_task(DataArguments(**run.data.options)).label_ids("train")
    expected = compute_class_weight("balanced", classes=np.array([0, 1]), y=train)
    np.testing.assert_allclose(run.training.class_weights, expected)
    assert expected[0] > 1 > expected[1]  # the rarer negative class weighs more


def test_batches_keep_each_text_with_its_label():
    ids = [np.arange(1, n + 1) for n in range(1, 30)]
    labels = np.array([n % 2 for n in range(1, 30)])
    for tokens, targets in grouped_batches(ids, np.eye(2)[labels], batch_size=4, max_length=64, shuffle_seed=3):
        lengths = (tokens.numpy() != 0).sum(axis=1)
        np.testing.assert_array_equal(targets.numpy().argmax(axis=1), lengths % 2)


def test_bucket_boundaries_are_increasing_and_below_max_length():
    bounds = bucket_boundaries(128)
    assert bounds[0] == 4 and bounds[-1] < 128
    assert all(a < b for a, b in zip(bounds, bounds[1:]))


@pytest.mark.slow
def test_resume_continues_an_interrupted_run(tmp_path, monkeypatch):
    train_file = write_csv(tmp_path / "train.csv", separable_rows(200))
    settings = {"epochs": 3, "patience": 5, "max_steps": None}

    class Interrupt(tf.keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            if epoch == 1:
                raise KeyboardInterrupt

    def interrupted(*args, **kwargs):
        *others, backup = make_callbacks(*args, **kwargs)
        return [*others, Interrupt(), backup]  # epoch 2 is logged, then interrupted before its backup

    make_callbacks = callbacks.make_callbacks
    monkeypatch.setattr(callbacks, "make_callbacks", interrupted)
    with pytest.raises(SystemExit, match="^130$"):  # an interruption ends the command with status 130
        main(tiny_argv(tmp_path / "run", train_file, **settings))
    partial = tmp_path / "run.partial"
    assert [row["epoch"] for row in read_history(partial / "history.jsonl")] == [1, 2]
    monkeypatch.setattr(callbacks, "make_callbacks", make_callbacks)
    main(tiny_argv(tmp_path / "run", train_file, resume=True, **settings))
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    assert [row["epoch"] for row in record["training"]["history"]] == [1, 2, 3]
    assert record["training"]["steps"] >= 3 * 11  # at least 11 batches of 16 per epoch: the step count was restored
    lines = [json.loads(line) for line in (tmp_path / "run" / "history.jsonl").read_text().splitlines()]
    # Epoch 2 was interrupted after it was logged but before its backup, so it ran again: it counts once.
    assert [row["epoch"] for row in lines] == [1, 2, 2, 3]
    once = {row["epoch"]: row["train_seconds"] for row in lines}
    assert record["training"]["seconds"] == pytest.approx(sum(once.values()), abs=2e-3)
    assert [row["train_seconds"] for row in record["training"]["history"]] == [once[1], once[2], once[3]]


@pytest.mark.slow
def test_eval_steps_and_evals_per_epoch_validate_within_an_epoch(tiny_run, tmp_path):
    run = read_run(
        train_tiny_run(
            tmp_path / "periods",
            tiny_run.parent / "train.csv",
            epochs=None,
            max_steps=30,
            eval_steps=7,
            evals_per_epoch=2,
            patience=10,
            no_onnx=True,
        )
    )
    training, hyperparameters = run.training, run.hyperparameters
    # twice a 12-step pass is more often than every 7 steps: the run validates, and records, every 6
    assert hyperparameters["steps_per_epoch"] == 12 and hyperparameters["eval_steps"] == 6
    history = training.history
    assert [row["steps"] for row in history] == [6, 12, 18, 24, 30]
    assert [row["stop_reason"] for row in history] == [None] * 4 + ["budget"]
    # 162 rows a pass in batches of 16: a whole pass counts its rows, the rest of a pass a batch per step
    assert [row["examples"] for row in history] == [6 * 16, 162 - 6 * 16] * 2 + [6 * 16]
    assert training.best_epoch == 1 + [row["val_accuracy"] for row in history].index(
        max(row["val_accuracy"] for row in history)
    )
