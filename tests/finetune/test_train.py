"""End to end on the tiny BERT: `finetune`'s main writes a run that reloads, repeats with its seed and resumes."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, f1_score

import core.training.loop
from core.args import DataArguments
from core.classifier import load
from core.data import load_task
from core.record import read_run
from core.rundir import partial_path
from finetune.checkpoint import load_for_task, resolve_checkpoint
from finetune.predict import FinetunedClassifier
from tests.conftest import NEGATIVE, POSITIVE
from tests.finetune.tiny import train_tiny_run


def _data(run: dict) -> tuple[list[str], np.ndarray]:
    task = load_task(DataArguments(**run.data.options))
    return task.texts("train"), task.label_ids("train")


def _cross_entropy(classifier: FinetunedClassifier, texts: list[str], labels: np.ndarray) -> float:
    probs = classifier.predict_proba(texts)
    return float(-np.log(probs[np.arange(len(labels)), labels]).mean())


def _initial_loss(run_dir: Path, run: dict) -> float:
    """Cross-entropy of the pretrained tiny BERT with a fresh head, before any training step."""
    from transformers import AutoTokenizer

    checkpoint = resolve_checkpoint(run.model.source)
    model = load_for_task(checkpoint, run.data.labels)
    tokenizer = AutoTokenizer.from_pretrained(checkpoint.directory)
    classifier = FinetunedClassifier(model, tokenizer, 16, labels=run.data.labels)
    return _cross_entropy(classifier, *_data(run))


def test_run_directory_holds_model_tokenizer_card_and_logs(base_run: Path) -> None:
    names = {p.name for p in base_run.iterdir()}
    assert {"tf_model.h5", "config.json", "tokenizer.json", "vocab.txt", "run.json", "README.md", "logs"} <= names
    assert "history.jsonl" in names
    assert "backup" not in names and not partial_path(base_run).exists()
    assert list((base_run / "logs" / "train").glob("events.out.tfevents.*"))
    config = json.loads((base_run / "config.json").read_text())
    assert config["id2label"] == {"0": "negative", "1": "positive"}
    assert config["label2id"] == {"negative": 0, "positive": 1}


def test_run_json_records_the_data_the_history_and_the_best_epoch(base_run: Path) -> None:
    run = read_run(base_run)
    task = load_task(DataArguments(**run.data.options))
    assert run.side == "finetune"
    assert run.data.fingerprints == task.fingerprints
    assert run.data.labels == ["negative", "positive"]
    history = run.training.history
    assert [row["epoch"] for row in history] == list(range(1, run.training.epochs_run + 1))
    best = max(history, key=lambda row: (row["val_accuracy"], -row["epoch"]))
    assert run.training.best_epoch == best["epoch"]
    assert run.hyperparameters["learning_rate"] == 5e-3 and run.hyperparameters["max_length"] == 16
    assert run.model.params == run.model.trainable_params > 0
    card = (base_run / "README.md").read_text()
    assert task.fingerprints["train"] in card and f"{run.validation['accuracy']:.4f}" in card


def test_reloaded_run_gives_the_probabilities_of_plain_transformers(base_run: Path) -> None:
    """Length-bucketed batches and the tf.function path change nothing against padding everything to one width."""
    import tensorflow as tf
    from transformers import AutoTokenizer, TFAutoModelForSequenceClassification

    texts = [*POSITIVE, *NEGATIVE, "a great film and a dull mess"]
    classifier = load(base_run)
    probs = classifier.predict_proba(texts)

    tokenizer = AutoTokenizer.from_pretrained(base_run)
    model = TFAutoModelForSequenceClassification.from_pretrained(base_run)
    batch = tokenizer(texts, padding="max_length", max_length=16, truncation=True, return_tensors="tf")
    (temperature,) = classifier.temperatures  # the run's calibration, fitted on validation after training
    expected = tf.nn.softmax(model(**batch, training=False).logits / temperature, axis=-1).numpy()
    np.testing.assert_allclose(probs, expected, atol=1e-5)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-6)
    single = np.stack([classifier.predict_proba([t])[0] for t in texts])
    np.testing.assert_allclose(single, probs, atol=1e-5)
    assert classifier.predict_proba([]).shape == (0, 2)


def test_label_names_survive_the_round_trip_and_the_model_learned_them(base_run: Path) -> None:
    classifier = load(base_run, name="tiny")
    assert (classifier.name, classifier.side, classifier.labels) == ("tiny", "finetune", ["negative", "positive"])
    decided = classifier.predict(POSITIVE + NEGATIVE)  # class ids
    assert [classifier.labels[i] for i in decided] == ["positive"] * 5 + ["negative"] * 5


def test_validation_metrics_match_an_independent_computation(base_run: Path) -> None:
    classifier = load(base_run)
    run = classifier.record
    task = load_task(DataArguments(**run.data.options))
    predicted = classifier.predict_proba(task.texts("validation")).argmax(axis=1)
    gold = task.label_ids("validation")
    labels = np.arange(len(run.data.labels))
    assert run.validation["accuracy"] == pytest.approx(accuracy_score(gold, predicted))
    assert run.validation["macro_f1"] == pytest.approx(
        f1_score(gold, predicted, labels=labels, average="macro", zero_division=0)
    )


def test_training_lowers_the_loss(base_run: Path) -> None:
    run = read_run(base_run)
    before = _initial_loss(base_run, run)
    after = _cross_entropy(load(base_run), *_data(run))
    assert before == pytest.approx(math.log(2), abs=0.05)  # a fresh head starts near chance
    assert after < before - 0.1
    history = run.training.history
    assert history[-1]["loss"] < history[0]["loss"]


@pytest.mark.slow
def test_same_seed_repeats_the_run(base_run: Path, runs_dir: Path, train_file: Path) -> None:
    again = read_run(train_tiny_run(runs_dir / "again", train_file, no_onnx=True))
    first = read_run(base_run)
    assert again.validation == first.validation
    for a, b in zip(again.training.history, first.training.history, strict=True):
        assert a["loss"] == pytest.approx(b["loss"], rel=1e-6)
        assert a["val_loss"] == pytest.approx(b["val_loss"], rel=1e-6)


class Interrupted(Exception):
    """Stands in for a killed process."""


class InterruptAfterFirstEpoch(core.training.loop.tf.keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        raise Interrupted(f"stopped after epoch {epoch + 1}")


class WeightSnapshots(core.training.loop.tf.keras.callbacks.Callback):
    """Keeps a copy of the weights at the end of every epoch."""

    def __init__(self) -> None:
        super().__init__()
        self.epochs: list[list[np.ndarray]] = []

    def on_epoch_end(self, epoch, logs=None):
        self.epochs.append([w.copy() for w in self.model.get_weights()])


@pytest.mark.slow
def test_interrupted_run_resumes_finishes_and_saves_the_best_epoch_s_weights(
    runs_dir: Path, train_file: Path, monkeypatch
) -> None:
    """Three epochs, the process interrupted after the first: the resumed process runs the other two, and the
    saved weights are the best epoch's (not the last's), even when it finished before the interruption."""
    output = runs_dir / "resumed"
    before, after = WeightSnapshots(), WeightSnapshots()
    make_callbacks = core.training.loop.make_callbacks
    monkeypatch.setattr(
        core.training.loop,
        "make_callbacks",
        lambda *a, **k: [before, *make_callbacks(*a, **k), InterruptAfterFirstEpoch()],
    )
    with pytest.raises(Interrupted):
        train_tiny_run(output, train_file, epochs=3, patience=3, no_onnx=True)
    partial = partial_path(output)
    assert not output.exists() and (partial / "backup").is_dir() and list(partial.glob("best_weights-*.npz"))
    first_epoch = json.loads((partial / "history.jsonl").read_text().splitlines()[0])

    monkeypatch.setattr(core.training.loop, "make_callbacks", lambda *a, **k: [after, *make_callbacks(*a, **k)])
    train_tiny_run(output, train_file, epochs=3, patience=3, resume=True, no_onnx=True)

    run = read_run(output)
    assert not partial.exists() and not (output / "backup").exists() and not list(output.glob("best_weights*"))
    assert run.training.epochs_run == 3 and (len(before.epochs), len(after.epochs)) == (1, 2)
    lines = [json.loads(line) for line in (output / "history.jsonl").read_text().splitlines()]
    assert [row["epoch"] for row in lines] == [1, 2, 3]  # the resumed process ran epochs 2 and 3 only
    assert run.training.history[0]["loss"] == first_epoch["loss"]
    # The training time counts the epoch before the interruption too, validation excluded.
    assert run.training.seconds == pytest.approx(sum(row["train_seconds"] for row in lines), abs=2e-3)
    assert first_epoch["train_seconds"] > 0
    assert run.training.steps == lines[-1]["steps"] == 3 * run.hyperparameters["steps_per_epoch"]
    assert run.validation["accuracy"] >= 0.9
    # The weights saved are the best epoch's, even when it finished before the interruption.
    from transformers import TFAutoModelForSequenceClassification

    best = run.training.best_epoch
    assert best < 3, "the run should peak before the last epoch, or the saved weights could be the last ones"
    snapshots = before.epochs + after.epochs
    saved = TFAutoModelForSequenceClassification.from_pretrained(output).get_weights()
    for restored, weights in zip(saved, snapshots[best - 1], strict=True):
        np.testing.assert_array_equal(restored, weights)
    assert any(not np.array_equal(r, last) for r, last in zip(saved, snapshots[-1], strict=True))


def test_a_refused_resume_is_one_error_line(runs_dir: Path, train_file: Path, capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        train_tiny_run(runs_dir / "never-started", train_file, resume=True)
    assert exit_.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("error: --resume: no unfinished run")


@pytest.mark.slow
def test_mixed_precision_trains_with_finite_falling_loss(runs_dir: Path, train_file: Path) -> None:
    import tensorflow as tf

    output = train_tiny_run(runs_dir / "mixed", train_file, mixed_precision=True, epochs=1)
    assert tf.keras.mixed_precision.global_policy().name == "float32"  # the run leaves no global state behind
    run = read_run(output)
    assert run.hyperparameters["mixed_precision"] is True
    assert 15 <= run.hyperparameters["steps_per_epoch"] <= 25
    loss = run.training.history[0]["loss"]
    assert math.isfinite(loss)
    classifier = load(output)
    after = _cross_entropy(classifier, *_data(run))
    assert math.isfinite(after) and after < _initial_loss(output, run) - 0.05


@pytest.mark.slow
def test_a_step_budget_sets_the_epochs_the_schedule_and_the_stop(runs_dir: Path, train_file: Path, monkeypatch) -> None:
    import finetune.train

    scheduled = []
    build_model = finetune.train.build_model
    monkeypatch.setattr(
        finetune.train, "build_model", lambda *a: scheduled.append(a[3]) or build_model(*a)
    )  # the linear decay's num_train_steps
    run = read_run(
        train_tiny_run(
            runs_dir / "budget", train_file, epochs=None, max_steps=30, class_weight="balanced", no_onnx=True
        )
    )
    training, hyperparameters = run.training, run.hyperparameters
    per_epoch = hyperparameters["steps_per_epoch"]
    assert per_epoch < 30 < 2 * per_epoch  # so the budget ends inside the second epoch
    assert hyperparameters["epochs"] == training.epochs_run == 2
    assert scheduled == [30] and hyperparameters["total_steps"] == 30
    assert (training.steps, training.stop_reason) == (30, "budget")
    assert training.budget == {"min_steps": 0, "max_steps": 30}
    assert hyperparameters["class_weight"] == "balanced"
    assert training.class_weights == pytest.approx([1.0, 1.0])  # the fixture's train split is balanced


@pytest.mark.slow
def test_a_time_budget_ends_training_at_the_clock_and_run_json_and_the_diagnosis_say_so(
    runs_dir: Path, train_file: Path, monkeypatch, caplog
) -> None:
    from compare.diagnosis import diagnose
    from core.training import callbacks
    from tests.core.training.test_callbacks import ticking_time

    monkeypatch.setattr(callbacks, "time", ticking_time())  # one second a reading: the stop does not race the load
    caplog.set_level("INFO", logger="core.training.loop")
    # 3 seconds (0.05 minutes): read at the start (1), after steps 1 and 2 (2, 3), by the log's line after the
    # validation at step 2 (4) and after step 3 (5): 4 seconds spent, training ends after the third step
    output = train_tiny_run(runs_dir / "clock", train_file, time_budget=0.05, eval_steps=2, no_onnx=True)
    run = read_run(output)
    training = run.training
    assert (training.stop_reason, training.steps) == ("time", 3)
    assert training.budget["time_budget_minutes"] == pytest.approx(0.05)
    assert training.history[-1]["stop_reason"] == "time" and training.history[-1]["elapsed_seconds"] >= 3
    assert "Training ended after 3 steps: the clock ran out (the time budget, 0.05 min, was spent)" in caplog.text
    found = [
        f for f in diagnose(run, run.validation, {}) if f["code"] in ("stopped_while_improving", "stopped_by_clock")
    ]
    assert len(found) == 1 and found[0]["message"].startswith(
        "The clock ended training: its time budget (0.05 minutes)"
    )
