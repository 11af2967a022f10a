"""`python -m scratch export`: the SavedModel serves raw strings (a pair task's two) with no project code, for every
kind; no int8 variant, said why."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import spearmanr
from sklearn.metrics import f1_score

from core.args import DataArguments
from core.classifier import load
from core.data import load_task
from core.record import read_run
from core.tasks import MULTI_LABEL, REGRESSION, SINGLE_LABEL
from scratch.__main__ import main
from tests.conftest import NEGATIVE, POSITIVE

PAIR_KINDS = [SINGLE_LABEL, MULTI_LABEL, REGRESSION]
TEXTS = [*POSITIVE, *NEGATIVE, "a great film and a dull mess", "", "Wonderful, MOVING! 😀", "word " * 100]

FRESH_PROCESS = textwrap.dedent(
    """
    import json, sys
    import tensorflow as tf
    import tensorflow_text

    assert not any(name.split(".")[0] in ("core", "finetune", "scratch") for name in sys.modules)
    outputs = []
    for export_dir, inputs, output in json.loads(sys.argv[1]):
        serve = tf.saved_model.load(export_dir + "/saved_model").signatures["serving_default"]
        outputs.append(serve(**{name: tf.constant(texts) for name, texts in inputs.items()})[output].numpy().tolist())
    print(json.dumps(outputs))
    """
)


def served_in_a_fresh_process(export_dir: Path, inputs: dict[str, list[str]], output: str, cwd: Path) -> np.ndarray:
    """The export's `serving_default` outputs, from a Python process that imports TensorFlow alone."""
    return served_in_one_fresh_process([(export_dir, inputs, output)], cwd)[0]


def served_in_one_fresh_process(exports: list[tuple[Path, dict[str, list[str]], str]], cwd: Path) -> list[np.ndarray]:
    """Each (export, inputs, output)'s `serving_default` outputs, from one Python process that imports TensorFlow
    alone (and each export in turn)."""
    jobs = [(str(export_dir), inputs, output) for export_dir, inputs, output in exports]
    done = subprocess.run(
        [sys.executable, "-c", FRESH_PROCESS, json.dumps(jobs)], cwd=cwd, capture_output=True, text=True, check=True
    )
    return [np.array(rows) for rows in json.loads(done.stdout.strip().splitlines()[-1])]


@pytest.fixture(scope="module")
def exported(tiny_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    output = tmp_path_factory.mktemp("scratch-export") / "export"
    assert main(["export", str(tiny_run), "--output-dir", str(output)]) == 0
    return output


@pytest.fixture(scope="module")
def served(exported: Path, kind_run, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, np.ndarray]]:
    """The shared run's export and each pair kind's, with the outputs each serves in one fresh process: {"texts":
    (export, probabilities of TEXTS), problem type: (export, outputs of TEXTS paired with TEXTS reversed)}."""
    folder = tmp_path_factory.mktemp("pair-exports")
    exports = {"texts": (exported, {"text": TEXTS}, "probabilities")}
    for problem_type in PAIR_KINDS:
        output = folder / problem_type
        assert main(["export", str(kind_run(problem_type, True)), "--output-dir", str(output)]) == 0
        name = "values" if problem_type == REGRESSION else "probabilities"
        exports[problem_type] = (output, {"text": TEXTS, "text_pair": TEXTS[::-1]}, name)
    outputs = served_in_one_fresh_process(list(exports.values()), folder)
    return {key: (export[0], rows) for (key, export), rows in zip(exports.items(), outputs)}


@pytest.mark.slow
def test_the_export_serves_the_classifier_s_probabilities_in_a_fresh_process(served, tiny_run: Path) -> None:
    _, probabilities = served["texts"]
    np.testing.assert_allclose(probabilities, load(tiny_run).predict_proba(TEXTS), atol=1e-5)


def test_export_json_records_the_float_accuracy_and_why_there_is_no_int8(exported: Path, tiny_run: Path) -> None:
    run = read_run(tiny_run)
    record = json.loads((exported / "export.json").read_text())
    assert (exported / "labels.txt").read_text().splitlines() == run.data.labels
    assert record["int8"] is None and "TFLite" in record["int8_note"]
    assert not (exported / "model_int8.tflite").exists()
    task = load_task(DataArguments(**run.data.options))
    predicted = load(tiny_run).predict_proba(task.texts("test")).argmax(axis=1)
    assert record["test"]["float_accuracy"] == pytest.approx(np.mean(predicted == task.label_ids("test")))


def test_a_finetune_run_is_sent_to_its_own_side(tiny_run: Path, tmp_path: Path, capsys) -> None:
    record = read_run(tiny_run)
    other = tmp_path / "other"
    other.mkdir()
    (other / "run.json").write_text(json.dumps({**record.to_json(), "side": "finetune"}))
    with pytest.raises(SystemExit):
        main(["export", str(other), "--output-dir", str(tmp_path / "out")])
    assert "export it with python -m finetune export" in capsys.readouterr().err


def test_a_translation_run_is_refused_with_where_its_export_is(tmp_path: Path, capsys) -> None:
    run = tmp_path / "translation"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"schema_version": 1, "task_kind": "translation", "side": "scratch"}))
    with pytest.raises(SystemExit):
        main(["export", str(run), "--output-dir", str(tmp_path / "out")])
    assert "is a translation run; its saved_model/ is already its serving export" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("problem_type", PAIR_KINDS)
def test_a_pair_task_s_export_gives_the_run_s_outputs_in_a_fresh_process(kind_run, served, problem_type) -> None:
    run_dir = kind_run(problem_type, True)
    output, exported_outputs = served[problem_type]
    texts, pairs = TEXTS, TEXTS[::-1]
    name = "values" if problem_type == REGRESSION else "probabilities"
    model = load(run_dir)
    record = json.loads((output / "export.json").read_text())
    assert (record["problem_type"], record["inputs"], record["output"]) == (problem_type, ["text", "text_pair"], name)
    assert record["thresholds"] == model.thresholds
    test = load_task(DataArguments(**model.record.data.options))
    inputs, gold = (test.texts("test"), test.text_pairs("test")), test.targets("test")
    expected = {  # the test split's headline, from the run's own outputs
        SINGLE_LABEL: lambda: np.mean(model.kind.decide(model.predict_proba(*inputs), model.thresholds) == gold),
        MULTI_LABEL: lambda: f1_score(
            gold, model.kind.decide(model.predict_proba(*inputs), model.thresholds), average="macro", zero_division=0
        ),
        REGRESSION: lambda: spearmanr(gold, model.predict_values(*inputs)).statistic,
    }[problem_type]()
    headline = {SINGLE_LABEL: "accuracy", MULTI_LABEL: "macro_f1", REGRESSION: "spearman"}[problem_type]
    assert record["test"][f"float_{headline}"] == pytest.approx(expected, abs=1e-6)
    if problem_type == REGRESSION:
        np.testing.assert_allclose(exported_outputs, model.predict_values(texts, pairs), atol=1e-4)
        assert not (output / "labels.txt").exists()
        return
    probabilities = model.predict_proba(texts, pairs)
    np.testing.assert_allclose(exported_outputs, probabilities, atol=1e-4)
    np.testing.assert_array_equal(
        model.kind.decide(exported_outputs, model.thresholds), model.kind.decide(probabilities, model.thresholds)
    )  # the same labels
    assert (output / "labels.txt").read_text().splitlines() == model.labels
