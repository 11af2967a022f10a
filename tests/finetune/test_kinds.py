"""Every kind of task end to end on the tiny BERT: single-label pairs, multi-label and regression on single texts and
on pairs. Each run records the kind's contract, its validation scores and thresholds equal an independent
computation, `load` serves it through the `Classifier` protocol with the model's own outputs, a pair's output does not
depend on its batch, and the export, loaded with plain TensorFlow in a fresh process, gives the run's outputs."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import accuracy_score, f1_score, hamming_loss, mean_absolute_error, mean_squared_error

from core.args import DataArguments
from core.classifier import load
from core.data import load_task
from core.multilabel import choose_thresholds
from core.record import read_run
from core.rundir import partial_path
from core.tasks import MULTI_LABEL, REGRESSION, SINGLE_LABEL
from finetune.__main__ import main
from tests.finetune.tiny import CASES, case_name, kind_options, train_tiny_run, write_kind_csv

pytestmark = pytest.mark.slow  # the session fixture `kind_runs` (conftest.py) trains a run of every kind of task

PAIR_CASES = [case for case in CASES if case[1]]
HEADLINES = {SINGLE_LABEL: "accuracy", MULTI_LABEL: "macro_f1", REGRESSION: "spearman"}


def validation_split(run: dict) -> tuple[list[str], list[str] | None, np.ndarray]:
    task = load_task(DataArguments(**run.data.options))
    return task.texts("validation"), task.text_pairs("validation"), task.targets("validation")


def outputs(classifier, texts: list[str], pairs: list[str] | None) -> np.ndarray:
    if classifier.problem_type == REGRESSION:
        return classifier.predict_values(texts, pairs)
    return classifier.predict_proba(texts, pairs)


@pytest.mark.parametrize("case", CASES, ids=case_name)
def test_each_run_records_its_kind_its_headline_and_its_thresholds(kind_runs, case) -> None:
    problem, pairs = case
    run = read_run(kind_runs[case])
    data, headline = run.data, HEADLINES[problem]
    assert (data.problem_type, data.headline_metric) == (problem, headline)
    assert data.text_pair_column == ("sentence2" if pairs else None)
    assert run.training.early_stopping == {"monitor": f"val_{headline}", "mode": "max"}
    history = run.training.history
    best = max(history, key=lambda row: (row[f"val_{headline}"], -row["epoch"]))
    assert run.training.best_epoch == best["epoch"]
    assert ("val_accuracy" in history[0]) == (problem == SINGLE_LABEL)
    expected = {
        SINGLE_LABEL: {"loss", "accuracy", "macro_f1"},
        MULTI_LABEL: {"loss", "macro_f1", "micro_f1", "subset_accuracy", "hamming_loss"},
        REGRESSION: {"loss", "spearman", "pearson", "mse", "mae"},
    }[problem]
    assert set(run.validation) == expected
    if problem == MULTI_LABEL:
        assert data.labels == ["negative", "positive"] and len(run.thresholds) == 2
    else:
        assert run.thresholds is None
    config = json.loads((kind_runs[case] / "config.json").read_text())
    assert config["problem_type"] == problem  # what from_pretrained rebuilds
    assert len(config["id2label"]) == (1 if problem == REGRESSION else len(data.labels))
    assert run.serving == {"runtime": "tensorflow", "note": "trained with --no-onnx"}
    card = (kind_runs[case] / "README.md").read_text()
    assert f"{run.validation[headline]:.4f}" in card and f"val_{headline}" in card


def test_a_run_trained_with_no_onnx_is_served_through_tensorflow(kind_runs) -> None:
    for run_dir in kind_runs.values():
        assert not (run_dir / "model.onnx").exists()
        assert read_run(run_dir).serving == {"runtime": "tensorflow", "note": "trained with --no-onnx"}
        assert load(run_dir).runtime == "tensorflow"


@pytest.mark.parametrize("case", CASES, ids=case_name)
def test_validation_scores_and_thresholds_equal_an_independent_computation(kind_runs, case) -> None:
    problem, pairs = case
    classifier = load(kind_runs[case])
    run = classifier.record
    texts, text_pairs, gold = validation_split(run)
    got = outputs(classifier, texts, text_pairs)
    scores = run.validation
    if problem == SINGLE_LABEL:
        predicted = got.argmax(axis=1)
        assert scores["accuracy"] == pytest.approx(accuracy_score(gold, predicted))
        assert scores["macro_f1"] == pytest.approx(f1_score(gold, predicted, average="macro", labels=[0, 1]))
        assert scores["loss"] == pytest.approx(-np.log(got[np.arange(len(gold)), gold]).mean(), rel=1e-5)
    elif problem == MULTI_LABEL:
        np.testing.assert_allclose(run.thresholds, choose_thresholds(got, gold), atol=1e-6)
        assert classifier.thresholds == run.thresholds
        chosen = got >= np.array(run.thresholds)
        assert scores["macro_f1"] == pytest.approx(f1_score(gold, chosen, average="macro", zero_division=0))
        assert scores["micro_f1"] == pytest.approx(f1_score(gold, chosen, average="micro", zero_division=0))
        assert scores["hamming_loss"] == pytest.approx(hamming_loss(gold, chosen))
        assert scores["subset_accuracy"] == pytest.approx(accuracy_score(gold, chosen))
        np.testing.assert_array_equal(classifier.kind.decide(got, classifier.thresholds), chosen)
    else:
        assert got.shape == (len(texts),) and got.dtype == np.float32
        gold64, got64 = gold.astype(np.float64), got.astype(np.float64)  # SciPy computes in its inputs' precision
        assert scores["spearman"] == pytest.approx(spearmanr(gold64, got64).statistic, abs=1e-6)
        assert scores["pearson"] == pytest.approx(pearsonr(gold64, got64).statistic, abs=1e-6)
        assert scores["mse"] == scores["loss"] == pytest.approx(mean_squared_error(gold, got), rel=1e-5)
        assert scores["mae"] == pytest.approx(mean_absolute_error(gold, got), rel=1e-5)


@pytest.mark.parametrize("case", CASES, ids=case_name)
def test_load_gives_the_outputs_of_plain_transformers(kind_runs, case) -> None:
    """`from_pretrained` on the run, the tokenizer given (text, text_pair) and one padded batch: the same numbers."""
    import tensorflow as tf
    from transformers import AutoTokenizer, TFAutoModelForSequenceClassification

    problem, pairs = case
    classifier = load(kind_runs[case])
    assert (classifier.problem_type, classifier.has_pairs) == case
    texts, text_pairs, _ = validation_split(classifier.record)
    tokenizer = AutoTokenizer.from_pretrained(kind_runs[case])
    model = TFAutoModelForSequenceClassification.from_pretrained(kind_runs[case])
    batch = tokenizer(texts, text_pairs, padding=True, truncation=True, max_length=16, return_tensors="tf")
    logits = model(**batch, training=False).logits
    # the run's calibration (one temperature, or one per label; none for regression), fitted after training
    scaled = logits / np.asarray(classifier.temperatures or [1.0], np.float32)
    expected = {
        SINGLE_LABEL: lambda: tf.nn.softmax(scaled, axis=-1),
        MULTI_LABEL: lambda: tf.sigmoid(scaled),
        REGRESSION: lambda: logits[:, 0],
    }[problem]().numpy()
    np.testing.assert_allclose(outputs(classifier, texts, text_pairs), expected, atol=1e-5)


@pytest.mark.parametrize("case", PAIR_CASES, ids=case_name)
def test_a_pair_gives_the_same_output_alone_and_beside_a_longer_pair(kind_runs, case) -> None:
    classifier = load(kind_runs[case])
    short = ("a joy to watch", "i hated it")
    long = ("wonderful and moving and a great film", "boring and far too long and a waste of time")
    alone = outputs(classifier, [short[0]], [short[1]])
    beside = outputs(classifier, [short[0], long[0]], [short[1], long[1]])
    np.testing.assert_allclose(beside[0], alone[0], atol=1e-5)


def test_the_protocol_refuses_inputs_of_another_kind(kind_runs) -> None:
    regression, multi = load(kind_runs[REGRESSION, True]), load(kind_runs[MULTI_LABEL, False])
    with pytest.raises(ValueError, match="this model reads text pairs: pass text_pairs"):
        regression.predict_values(["a great film"])
    with pytest.raises(ValueError, match="got 2 texts but 1 text_pairs"):
        regression.predict_values(["a great film", "a dull mess"], ["i hated it"])
    with pytest.raises(ValueError, match="call predict_values, not predict_proba"):
        regression.predict_proba(["a great film"], ["i hated it"])
    with pytest.raises(ValueError, match="this model reads single texts: pass no text_pairs"):
        multi.predict_proba(["a great film"], ["i hated it"])
    assert regression.predict_values([], []).shape == (0,)
    assert multi.predict_proba([]).shape == (0, 2)


def test_a_multi_label_run_predicts_the_labels_its_thresholds_choose(kind_runs) -> None:
    classifier = load(kind_runs[MULTI_LABEL, False])
    texts = ["a great film and a joy to watch", "a dull mess and i hated it", "superb acting and terrible acting"]
    probs = classifier.predict_proba(texts)
    chosen = probs >= np.array(classifier.thresholds)
    np.testing.assert_array_equal(classifier.predict(texts), chosen.astype(np.int64))  # 0/1 rows (n, L)


@pytest.mark.parametrize("problem", [MULTI_LABEL, REGRESSION])
def test_balanced_class_weights_are_refused_for_multi_label_and_regression(problem, tmp_path: Path, capsys) -> None:
    train = write_kind_csv(tmp_path / "train.csv", problem, pairs=False, n=40)
    output = tmp_path / "run"
    with pytest.raises(SystemExit) as stopped:
        train_tiny_run(output, train, class_weight="balanced", **kind_options(problem, False))
    assert stopped.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert error == [
        f"error: --class-weight balanced weighs single-label classes, but "
        f"{'a regression task has no classes' if problem == REGRESSION else 'multi-label labels overlap'} "
        f"({problem}); drop --class-weight or pass --class-weight none."
    ]
    assert not output.exists() and not partial_path(output).exists()


# Runs in a fresh interpreter from an empty folder: only TensorFlow and tensorflow-text, no project code. Serves
# each export it is given (export directory, texts, pairs, output name) and prints their outputs, in order.
FRESH_PROCESS = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import tensorflow as tf
    import tensorflow_text
    from tensorflow.lite.python.interpreter import InterpreterWithCustomOps

    served = []
    for export_dir, texts, pairs, output in json.loads(sys.argv[1]):
        serve = tf.saved_model.load(export_dir + "/saved_model").signatures["serving_default"]
        floats = serve(text=tf.constant(texts), text_pair=tf.constant(pairs))[output].numpy()
        interpreter = InterpreterWithCustomOps(
            model_path=export_dir + "/model_int8.tflite",
            custom_op_registerers=tensorflow_text.tflite_registrar.SELECT_TFTEXT_OPS,
        )
        runner = interpreter.get_signature_runner("serving_default")
        int8 = runner(text=np.array(texts, dtype=object), text_pair=np.array(pairs, dtype=object))[output]
        served.append({"float": floats.tolist(), "int8": int8.tolist()})
    assert not any(name.split(".")[0] in ("core", "finetune", "scratch") for name in sys.modules)
    print(json.dumps(served))
    """
)


# The two kinds whose outputs are not class probabilities; a pair's inputs are the same for every kind, and a
# single-label export is tested in tests/finetune/test_export.py.
EXPORT_CASES = [(MULTI_LABEL, True), (REGRESSION, True)]


def export_texts(classifier) -> tuple[list[str], list[str]]:
    """The run's test pairs, an empty text and a pair longer than `--max-length` (cut longest first)."""
    task = load_task(DataArguments(**classifier.record.data.options))
    texts, pairs = task.texts("test"), task.text_pairs("test")
    texts += ["", "wonderful and moving and a great film and superb acting and a joy to watch"]
    pairs += ["a dull mess", "boring and far too long and i hated it and a waste of time and terrible acting"]
    return texts, pairs


@pytest.fixture(scope="module")
def pair_exports(kind_runs, tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, bool], tuple[Path, dict]]:
    """Each of `EXPORT_CASES`' runs exported, and what its SavedModel and int8 TFLite files give `export_texts` in
    one fresh process: {case: (export directory, {"float": outputs, "int8": outputs})}."""
    root = tmp_path_factory.mktemp("finetune-kind-exports")
    jobs = []
    for case in EXPORT_CASES:
        export_dir = root / case_name(case)
        assert main(["export", str(kind_runs[case]), "--output-dir", str(export_dir)]) == 0
        output = "values" if case[0] == REGRESSION else "probabilities"
        jobs.append([str(export_dir), *export_texts(load(kind_runs[case])), output])
    done = subprocess.run(
        [sys.executable, "-c", FRESH_PROCESS, json.dumps(jobs)], cwd=root, capture_output=True, text=True, check=True
    )
    served = json.loads(done.stdout.strip().splitlines()[-1])
    return {
        case: (Path(job[0]), {k: np.array(v) for k, v in outputs.items()})
        for case, job, outputs in zip(EXPORT_CASES, jobs, served, strict=True)
    }


@pytest.mark.parametrize("case", EXPORT_CASES, ids=case_name)
def test_the_export_of_a_pair_task_serves_the_run_s_outputs_with_plain_tensorflow(kind_runs, pair_exports, case):
    from core.export import load_onnx

    problem, _ = case
    export_dir, served = pair_exports[case]
    classifier = load(kind_runs[case])
    record = json.loads((export_dir / "export.json").read_text())
    output = "values" if problem == REGRESSION else "probabilities"
    assert (record["problem_type"], record["inputs"], record["output"]) == (problem, ["text", "text_pair"], output)
    assert record["thresholds"] == classifier.thresholds
    assert (export_dir / "labels.txt").is_file() == (problem != REGRESSION)

    texts, pairs = export_texts(classifier)
    expected = outputs(classifier, texts, pairs)
    np.testing.assert_allclose(served["float"], expected, atol=1e-4)
    assert served["int8"].shape == expected.shape
    if problem == SINGLE_LABEL:
        np.testing.assert_array_equal(
            classifier.kind.decide(served["float"], classifier.thresholds),
            classifier.kind.decide(expected, classifier.thresholds),
        )
    np.testing.assert_allclose(load_onnx(export_dir, "float")(texts, pairs), expected, atol=1e-4)

    task = load_task(DataArguments(**classifier.record.data.options))
    headline = HEADLINES[problem]
    test_outputs = outputs(classifier, task.texts("test"), task.text_pairs("test"))
    scores = {
        SINGLE_LABEL: lambda: accuracy_score(task.targets("test"), test_outputs.argmax(axis=1)),
        MULTI_LABEL: lambda: f1_score(
            task.targets("test"), test_outputs >= np.array(classifier.thresholds), average="macro", zero_division=0
        ),
        REGRESSION: lambda: spearmanr(task.targets("test"), test_outputs).statistic,
    }
    assert record["test"][f"float_{headline}"] == pytest.approx(scores[problem](), abs=1e-6)
    assert {f"int8_{headline}", f"onnx_float_{headline}", f"onnx_int8_{headline}"} <= set(record["test"])


def test_a_pair_regression_run_is_served_through_its_checked_onnx_model(tmp_path: Path) -> None:
    from finetune.predict import load as load_finetuned

    train = write_kind_csv(tmp_path / "train.csv", REGRESSION, pairs=True)
    output = train_tiny_run(tmp_path / "run", train, epochs=1, **kind_options(REGRESSION, True))
    onnx = load(output)
    assert onnx.runtime == "onnxruntime" and onnx.record.serving["max_abs_difference"] <= 1e-4
    texts, pairs, _ = validation_split(onnx.record)
    tensorflow = load_finetuned(output, onnx.record, runtime="tensorflow")
    np.testing.assert_allclose(onnx.predict_values(texts, pairs), tensorflow.predict_values(texts, pairs), atol=1e-4)
