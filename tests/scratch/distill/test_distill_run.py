"""`python -m scratch --teacher RUN`: a student of a fixed teacher, run.json `distillation`, the cached transfer
set, and every bad teacher or option refused before a run directory is made."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from core.args import DataArguments
from core.classifier import load
from core.data import load_task
from core.record import read_run
from core.tasks import SINGLE_LABEL
from scratch.distill.loss import DistillationLoss, pack_targets
from scratch.distill.transfer import TRANSFER_FILE, TransferSet, transfer_set
from scratch.model import build_classifier, config_from_preset
from scratch.pipeline import grouped_batches
from tests.conftest import separable_rows, write_csv
from tests.scratch.tiny import refuse, tiny_argv, train_tiny_run

STEPS = 40


@pytest.fixture(scope="module")
def runs(tiny_run: Path) -> dict[str, Path]:
    """The shared tiny run as the teacher, and a student of it (A = 0.3, T = 2, one augmented copy)."""
    train_file = tiny_run.parent / "train.csv"
    student = train_tiny_run(
        tiny_run.parent / "student",
        train_file,
        teacher=tiny_run,
        distill_weight=0.3,
        augment=1,
        max_steps=STEPS,
        no_onnx=True,
    )
    return {"teacher": tiny_run, "student": student, "train_file": train_file}


def fit_student(token_ids: np.ndarray, targets: np.ndarray, loss: tf.keras.losses.Loss) -> tf.keras.Model:
    """The tiny preset's network fitted for 80 steps on the targets (same initialisation every time)."""
    tf.keras.utils.set_random_seed(0)
    model = build_classifier(config_from_preset("tiny", num_labels=3, vocab_size=40))
    model.compile(optimizer=tf.keras.optimizers.Adam(3e-3), loss=loss)
    batches = grouped_batches(list(token_ids), targets, batch_size=32, max_length=16, shuffle_seed=0)
    model.fit(batches.repeat(), steps_per_epoch=80, epochs=1, verbose=0)
    return model


@pytest.mark.slow
def test_a_student_of_a_fixed_teacher_reproduces_its_soft_labels_better_than_one_trained_on_gold():
    rng = np.random.default_rng(0)
    token_ids = rng.integers(2, 40, size=(600, 8))  # (n, T)
    weights = rng.normal(size=(40, 3))  # a fixed teacher: soft logits from a bag of words
    bags = np.stack([np.bincount(row, minlength=40) for row in token_ids]).astype(np.float32)  # (n, V)
    teacher = (bags @ weights / 4).astype(np.float32)  # (n, K)
    gold = teacher.argmax(axis=1)
    train, test = slice(0, 500), slice(500, None)
    targets = pack_targets(gold[train], teacher[train])  # class ids
    students = {
        "teacher": fit_student(token_ids[train], targets, DistillationLoss(SINGLE_LABEL, 3, weight=0.0, temperature=1)),
        "gold": fit_student(token_ids[train], targets, DistillationLoss(SINGLE_LABEL, 3, weight=1.0, temperature=1)),
    }
    soft = tf.nn.softmax(teacher[test]).numpy()
    assert soft.max(axis=1).mean() < 0.9  # the teacher's labels are soft
    error = {
        name: np.abs(tf.nn.softmax(model(token_ids[test])).numpy() - soft).mean() for name, model in students.items()
    }
    assert error["teacher"] < 0.5 * error["gold"], error


@pytest.mark.slow
def test_run_json_records_the_teacher_and_the_transfer_set_stays_with_the_run(runs):
    run, teacher = read_run(runs["student"]), read_run(runs["teacher"])
    record = run.distillation
    assert record["teacher"] == str(runs["teacher"].resolve())
    assert record["teacher_fingerprints"] == teacher.data.fingerprints == run.data.fingerprints
    assert (record["weight"], record["temperature"], record["augment"]) == (0.3, 2.0, 1)
    train_rows = run.train_rows
    assert (record["transfer_rows"], record["augmented_rows"]) == (2 * train_rows, train_rows)
    assert run.training.history[0]["accuracy"] > 0 and run.validation["accuracy"] > 0.5
    card = (runs["student"] / "README.md").read_text()
    assert f"Distilled from the scratch run `{record['teacher']}`" in card and f"({2 * train_rows:,} rows" in card
    saved = TransferSet.read(runs["student"] / TRANSFER_FILE)
    assert len(saved.texts) == 2 * train_rows and (saved.real_rows, saved.augmented) == (train_rows, train_rows)
    assert saved.texts[:train_rows] == load_task(DataArguments(**run.data.options)).texts("train")
    assert record["seconds"] == round(saved.seconds, 3) and saved.seconds > 0
    assert record["soft_targets"] == "log_probabilities" and saved.text_pairs is None
    assert record["teacher_validation"] == {"accuracy": teacher.validation["accuracy"]}
    # the teacher's log-probabilities of every row, as the teacher predicts them now
    probs = load(runs["teacher"]).predict_proba(saved.texts)
    np.testing.assert_allclose(np.exp(saved.teacher), probs, atol=1e-5)


@pytest.mark.slow  # the module's teacher and student runs
def test_the_transfer_set_is_read_back_rather_than_relabelled(runs, tmp_path):
    data = load_task(DataArguments(train_file=str(runs["train_file"])))
    teacher_run = read_run(runs["teacher"])
    shutil.copy(runs["student"] / TRANSFER_FILE, tmp_path / TRANSFER_FILE)

    def no_teacher(path):
        raise AssertionError("the teacher was asked again")

    again = transfer_set(tmp_path, runs["teacher"].resolve(), teacher_run, data, 1, 42, loader=no_teacher)
    first = TransferSet.read(runs["student"] / TRANSFER_FILE)
    assert again.texts == first.texts
    assert again.seconds == first.seconds > 0  # the teacher's time is carried over, not the time to read it back
    with pytest.raises(AssertionError, match="asked again"):  # another --augment is another transfer set
        transfer_set(tmp_path, runs["teacher"].resolve(), teacher_run, data, 2, 42, loader=no_teacher)


def edited_teacher(teacher: Path, folder: Path, edit) -> Path:
    """A copy of the teacher's run.json alone, edited: enough for the checks made before training."""
    folder.mkdir(parents=True)
    run = json.loads((teacher / "run.json").read_text())
    edit(run)
    (folder / "run.json").write_text(json.dumps(run))
    return folder


@pytest.mark.slow  # the module's teacher and student runs
def test_bad_teachers_are_refused_before_training_with_both_sides_named(runs, tmp_path, capsys):
    teacher = runs["teacher"]
    half = tmp_path / "half"
    (tmp_path / "half.partial").mkdir()
    no_json = tmp_path / "no-json"
    no_json.mkdir()

    def relabel(run):
        run["data"]["labels"] = ["bad", "good"]

    def other_split(run):
        run["data"]["fingerprints"]["validation"] = "f" * 64

    def translation(run):
        run["task_kind"] = "translation"

    cases = {
        tmp_path / "missing": "does not exist",
        half: "An unfinished run is in",
        no_json: "is not a finished run",
        edited_teacher(teacher, tmp_path / "translation", translation): "is a translation run",
        edited_teacher(teacher, tmp_path / "labels", relabel): "labels ['bad', 'good'], but this run's data",
        edited_teacher(teacher, tmp_path / "splits", other_split): "fingerprint ffffffffffff (teacher) versus",
    }
    for path, message in cases.items():
        out = tmp_path / "out"
        err = refuse(tiny_argv(out, runs["train_file"], teacher=path), capsys)
        assert err.startswith("error: --teacher") and message in err, err
        assert str(path) in err
        assert not out.exists() and not (tmp_path / "out.partial").exists()


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ({"temperature": 0}, "--temperature must be positive"),
        ({"temperature": "inf"}, "--temperature must be positive and finite"),
        ({"distill_weight": 1.5}, "--distill-weight must be in [0, 1]"),
        ({"distill_weight": -0.1}, "--distill-weight must be in [0, 1]"),
        ({"augment": -1}, "--augment must be 0 or more"),
        ({"class_weight": "balanced"}, "--class-weight balanced does not combine with --teacher"),
    ],
)
def test_bad_distillation_options_are_refused_before_training(option, message, tmp_path, capsys):
    train_file = write_csv(tmp_path / "train.csv", separable_rows(40))
    err = refuse(tiny_argv(tmp_path / "out", train_file, teacher=tmp_path / "teacher", **option), capsys)
    assert message in err
    assert not (tmp_path / "out").exists() and not (tmp_path / "out.partial").exists()


def test_distillation_options_without_a_teacher_are_refused(tmp_path, capsys):
    train_file = write_csv(tmp_path / "train.csv", separable_rows(40))
    err = refuse(tiny_argv(tmp_path / "out", train_file, augment=3, temperature=4), capsys)
    assert err == "error: --temperature, --augment only apply with --teacher RUN_DIR; add a teacher, or leave them out."
    assert not (tmp_path / "out").exists() and not (tmp_path / "out.partial").exists()
