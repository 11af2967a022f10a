"""Every kind of task from scratch, on single texts and on pairs: trained end to end with the contract's run.json
fields, scores recomputed independently (scikit-learn, SciPy), served through `core.classifier.load` as the saved
model computes them, pairs told apart by their order, and the kinds' refusals before any run directory."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import f1_score, mean_squared_error

from core.args import DataArguments
from core.classifier import load
from core.data import load_task
from core.record import read_run
from core.tasks import MULTI_LABEL, REGRESSION, SINGLE_LABEL
from scratch import predict
from scratch.distill.transfer import TRANSFER_FILE, TransferSet
from scratch.embedding import segment_ids
from tests.scratch.kinds import kind_argv, write_kind_file
from tests.scratch.tiny import refuse, tiny_argv, train_tiny_run

pytestmark = pytest.mark.slow  # the session fixture trains a run of every kind of task

CASES = [(SINGLE_LABEL, True), (MULTI_LABEL, False), (MULTI_LABEL, True), (REGRESSION, False), (REGRESSION, True)]
HEADLINES = {SINGLE_LABEL: "accuracy", MULTI_LABEL: "macro_f1", REGRESSION: "spearman"}
NOISE = 1e-5  # how far a probability recomputed in other batches may move: a decision at the threshold allows it
LONG = "a great film superb acting and wonderful and moving " * 6


@pytest.fixture(scope="module")
def served(kind_run):
    """`served(problem_type, pairs)`: that kind's run loaded once for the module, as `core.classifier.load` serves it
    (ONNX Runtime) and through TensorFlow: each load reads the Keras model and traces its forward pass."""
    loaded = {}

    def get(problem_type: str, pairs: bool):
        if (problem_type, pairs) not in loaded:
            run_dir = kind_run(problem_type, pairs)
            loaded[problem_type, pairs] = (
                load(run_dir),
                predict.load(run_dir, read_run(run_dir), runtime="tensorflow"),
            )
        return loaded[problem_type, pairs]

    return get


def validation_split(run: dict) -> tuple[list[str], list[str] | None, np.ndarray]:
    data = load_task(DataArguments(**run.data.options))
    return data.texts("validation"), data.text_pairs("validation"), data.targets("validation")


@pytest.mark.parametrize(("problem_type", "pairs"), CASES)
def test_each_kind_trains_and_records_its_headline_and_thresholds(kind_run, served, problem_type, pairs):
    run_dir = kind_run(problem_type, pairs)
    run = read_run(run_dir)
    headline = HEADLINES[problem_type]
    assert (run.data.problem_type, run.data.headline_metric) == (problem_type, headline)
    assert run.data.text_pair_column == ("text_pair" if pairs else None)
    config = run.model.config
    assert (config["problem_type"], config["pairs"], config["num_labels"]) == (
        problem_type,
        pairs,
        1 if problem_type == REGRESSION else 2,
    )
    training = run.training
    assert training.early_stopping == {"monitor": f"val_{headline}", "mode": "max"}
    best = max(training.history, key=lambda row: row[f"val_{headline}"])  # the first of equals
    assert training.best_epoch == best["epoch"]

    _, model = served(problem_type, pairs)
    texts, text_pairs, gold = validation_split(run)
    validation = run.validation
    if problem_type == REGRESSION:
        values = model.predict_values(texts, text_pairs)
        assert validation["spearman"] == pytest.approx(spearmanr(gold, values).statistic, abs=1e-5)
        # the kept epoch's: the watched score came from the training graph's outputs, the record from the saved
        # model's, whose float rounding may swap a few near-tied ranks among 40 values
        assert validation["spearman"] == pytest.approx(best["val_spearman"], abs=1e-3)
        assert validation["pearson"] == pytest.approx(pearsonr(gold, values).statistic, abs=1e-5)
        assert validation["mse"] == pytest.approx(mean_squared_error(gold, values), rel=1e-4)
        assert run.thresholds is None
    elif problem_type == MULTI_LABEL:
        probs = model.predict_proba(texts, text_pairs)
        thresholds = np.array(run.thresholds)
        assert thresholds.shape == (2,)
        for k in range(2):  # each threshold is a cut that maximises its label's validation F1 (brute force)
            cuts = [*probs[:, k], 0.5]
            best_f1 = max(f1_score(gold[:, k], probs[:, k] >= cut - NOISE, zero_division=0) for cut in cuts)
            chosen = f1_score(gold[:, k], probs[:, k] >= thresholds[k] - NOISE, zero_division=0)
            assert chosen == pytest.approx(best_f1)
        decided = probs >= thresholds - NOISE
        assert validation["macro_f1"] == pytest.approx(f1_score(gold, decided, average="macro", zero_division=0))
        assert validation["micro_f1"] == pytest.approx(f1_score(gold, decided, average="micro", zero_division=0))
    else:
        probs = model.predict_proba(texts, text_pairs)
        assert validation["accuracy"] == pytest.approx(np.mean(probs.argmax(axis=1) == gold))
        assert validation["accuracy"] == pytest.approx(best["val_accuracy"], abs=1e-6)
        assert run.thresholds is None


@pytest.mark.parametrize(("problem_type", "pairs"), CASES)
def test_load_serves_the_saved_model_s_outputs_through_onnx_and_tensorflow(kind_run, served, problem_type, pairs):
    run_dir = kind_run(problem_type, pairs)
    run = read_run(run_dir)
    texts, text_pairs, _ = validation_split(run)
    texts, text_pairs = [*texts, "", LONG], None if text_pairs is None else [*text_pairs, LONG, ""]
    saved = tf.keras.models.load_model(run_dir / "model.keras", compile=False, safe_mode=True)
    strings = [tf.constant(texts)] + ([] if text_pairs is None else [tf.constant(text_pairs)])
    # the saved model's outputs at the run's temperatures (`core.calibration`, tested against SciPy on its own)
    expected = run.kind.calibration.apply(saved(strings if pairs else strings[0]).numpy(), run.temperatures)
    onnx, tensorflow = served(problem_type, pairs)
    assert (onnx.runtime, tensorflow.runtime) == ("onnxruntime", "tensorflow")
    assert (onnx.problem_type, onnx.has_pairs, onnx.thresholds) == (problem_type, pairs, run.thresholds)
    for model in (onnx, tensorflow):
        if problem_type == REGRESSION:
            outputs = model.predict_values(texts, text_pairs)
            assert outputs.shape == (len(texts),) and outputs.dtype == np.float32
        else:
            outputs = model.predict_proba(texts, text_pairs)
            assert outputs.shape == (len(texts), 2)
        np.testing.assert_allclose(outputs, expected, atol=1e-5)
    outputs = onnx.predict_values if problem_type == REGRESSION else onnx.predict_proba
    with pytest.raises(ValueError, match="pass text_pairs" if pairs else "pass no text_pairs"):
        outputs(texts[:1], None if pairs else texts[:1])


@pytest.mark.parametrize("problem_type", [SINGLE_LABEL, MULTI_LABEL, REGRESSION])
def test_a_pair_s_output_is_the_same_alone_and_batched_with_a_longer_pair(served, problem_type):
    for model in served(problem_type, True):
        outputs = model.predict_values if problem_type == REGRESSION else model.predict_proba
        alone = outputs(["a great film"], ["i hated it"])
        batched = outputs(["a great film", LONG], ["i hated it", LONG])[:1]  # one batch, padded to the long pair
        np.testing.assert_allclose(batched, alone, atol=1e-5)


def test_swapping_the_two_columns_changes_the_model_s_input_and_the_record_names_both(kind_run, tmp_path):
    run_dir = kind_run(SINGLE_LABEL, True)
    run = read_run(run_dir)
    train_file = run.data.options["train_file"]
    swapped_dir = train_tiny_run(
        tmp_path / "swapped", train_file, text_column="text_pair", text_pair_column="text", max_steps=2, no_onnx=True
    )
    swapped = read_run(swapped_dir)
    assert (run.data.options["text_column"], run.data.text_pair_column) == (None, "text_pair")
    assert (swapped.data.options["text_column"], swapped.data.text_pair_column) == (["text_pair"], "text")
    assert swapped.data.fingerprints["train"] != run.data.fingerprints["train"]

    data, swapped_data = (load_task(DataArguments(**r.data.options)) for r in (run, swapped))
    assert swapped_data.texts("train") == data.text_pairs("train")  # the same rows, the columns exchanged
    tokenizer = load(run_dir).tokenizer
    ids = tokenizer(tf.constant(data.texts("train")), tf.constant(data.text_pairs("train"))).numpy()
    exchanged = tokenizer(tf.constant(swapped_data.texts("train")), tf.constant(swapped_data.text_pairs("train")))
    exchanged = exchanged.numpy()
    segments, exchanged_segments = (segment_ids(x, tokenizer.separator_id).numpy() for x in (ids, exchanged))
    real, exchanged_real = ids != 0, exchanged != 0
    for row in range(len(ids)):  # the same tokens, in the other order, in the other segments
        assert sorted(ids[row][real[row]]) == sorted(exchanged[row][exchanged_real[row]])
        first = int(segments[row][real[row]].tolist().count(0)) - 1  # the first text's tokens, before [SEP]
        assert int((exchanged_segments[row][exchanged_real[row]] == 1).sum()) == first
    lengths = np.array(
        [len(a.split()) != len(b.split()) for a, b in zip(data.texts("train"), data.text_pairs("train"))]
    )
    assert lengths.any()
    assert (segments[lengths] != exchanged_segments[lengths]).any(axis=1).all()  # unequal texts: other segments


@pytest.mark.parametrize(
    ("problem_type", "message"),
    [
        (
            REGRESSION,
            "error: --class-weight balanced weighs single-label classes, but a regression task has no classes "
            "(regression); drop --class-weight or pass --class-weight none.",
        ),
        (
            MULTI_LABEL,
            "error: --class-weight balanced weighs single-label classes, but multi-label labels overlap "
            "(multi_label_classification); drop --class-weight or pass --class-weight none.",
        ),
    ],
)
def test_balanced_class_weights_are_refused_for_a_kind_without_exclusive_classes(
    problem_type, message, tmp_path, capsys
):
    train_file = write_kind_file(tmp_path / "train.csv", problem_type, pairs=True, n=40)
    argv = tiny_argv(tmp_path / "out", train_file, **kind_argv(problem_type, True), class_weight="balanced")
    assert refuse(argv, capsys) == message
    assert not (tmp_path / "out").exists() and not (tmp_path / "out.partial").exists()


def test_a_regression_student_refuses_a_temperature_and_a_teacher_of_another_kind(kind_run, tmp_path, capsys):
    teacher = kind_run(REGRESSION, True)
    train_file = teacher.parent / "train.csv"
    argv = tiny_argv(tmp_path / "out", train_file, **kind_argv(REGRESSION, True), teacher=teacher, temperature=4)
    assert refuse(argv, capsys) == (
        "error: --temperature 4 softens class probabilities; a regression teacher's values are learnt by squared "
        "error, at no temperature. Leave --temperature out."
    )
    other = write_kind_file(tmp_path / "multi.csv", MULTI_LABEL, pairs=True)
    argv = tiny_argv(tmp_path / "out", other, **kind_argv(MULTI_LABEL, True), teacher=teacher)
    message = refuse(argv, capsys)
    assert message.startswith(f"error: --teacher {teacher.resolve()} was trained on a regression task, but this run's")
    assert message.endswith("is multi_label_classification. Choose a teacher trained on the same task.")
    assert not (tmp_path / "out").exists() and not (tmp_path / "out.partial").exists()


@pytest.mark.parametrize("problem_type", [MULTI_LABEL, REGRESSION])
def test_a_student_of_a_pair_task_trains_on_its_teacher_s_soft_targets(kind_run, served, problem_type, tmp_path):
    teacher_dir = kind_run(problem_type, True)
    student = train_tiny_run(
        tmp_path / "student",
        teacher_dir.parent / "train.csv",
        **kind_argv(problem_type, True),
        teacher=teacher_dir,
        max_steps=10,
        no_onnx=True,
    )
    run, teacher_run = read_run(student), read_run(teacher_dir)
    record = run.distillation
    headline = HEADLINES[problem_type]
    assert record["teacher_validation"] == {headline: teacher_run.validation[headline]}
    assert record["soft_targets"] == {MULTI_LABEL: "log_odds", REGRESSION: "values"}[problem_type]
    saved = TransferSet.read(student / TRANSFER_FILE)
    rows = run.data.splits["train"]
    assert (len(saved.texts), len(saved.text_pairs), saved.real_rows) == (2 * rows, 2 * rows, rows)
    data = load_task(DataArguments(**run.data.options))
    assert (saved.texts[:rows], saved.text_pairs[:rows]) == (data.texts("train"), data.text_pairs("train"))
    teacher, _ = served(problem_type, True)
    if problem_type == REGRESSION:
        np.testing.assert_allclose(
            saved.teacher[:, 0], teacher.predict_values(saved.texts, saved.text_pairs), atol=1e-5
        )
    else:  # the log-odds of each label's probability
        probs = teacher.predict_proba(saved.texts, saved.text_pairs)
        np.testing.assert_allclose(1 / (1 + np.exp(-saved.teacher)), probs, atol=1e-5)
    assert np.isfinite([row[f"val_{headline}"] for row in run.training.history]).all()
    assert np.isfinite(run.validation[headline])


def test_explain_shows_a_pair_as_one_sequence_joined_by_the_separator(served):
    model, _ = served(REGRESSION, True)
    tokens, attention = model.explain("A great film", "i HATED it")
    assert tokens == ["a", "great", "film", "[SEP]", "i", "hated", "it"]
    assert attention.shape[-2:] == (7, 7)
    np.testing.assert_allclose(attention.sum(axis=-1), 1.0, atol=1e-5)
    with pytest.raises(ValueError, match="explain takes a text_pair exactly when the model reads text pairs"):
        model.explain("A great film")
